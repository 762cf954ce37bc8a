//go:build tools

// Package tools names the Kubernetes commands the test bed builds, so that `go mod tidy` keeps them
// (and everything they import) in go.mod and go.sum. Nothing here is compiled into the bed:
// testbed/build.ts runs `go build k8s.io/kubernetes/cmd/<name>` inside this module.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
