//go:build tools

// Package tools names etcd's server command (go.etcd.io/etcd/server/v3 is itself package main),
// so that `go mod tidy` keeps it in go.mod and go.sum; testbed/build.ts builds it from this module.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
)
