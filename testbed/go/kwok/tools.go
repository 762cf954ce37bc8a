//go:build tools

// Package tools names kwok's command so that `go mod tidy` keeps it in go.mod and go.sum;
// testbed/build.ts builds it from this module.
package tools

import (
	_ "sigs.k8s.io/kwok/cmd/kwok"
)
