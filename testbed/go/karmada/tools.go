//go:build tools

// Package tools pins the Karmada commands the test bed builds. Nothing of
// Karmada is copied here: the go command fetches and builds the module named
// in go.mod (see testbed/README.md).
package tools

import (
	_ "github.com/karmada-io/karmada/cmd/aggregated-apiserver"
	_ "github.com/karmada-io/karmada/cmd/controller-manager"
	_ "github.com/karmada-io/karmada/cmd/scheduler"
	_ "github.com/karmada-io/karmada/cmd/webhook"
)
