//go:build !linux

// Package catalogpod runs catalog images as a kubelet would; only on Linux.
package catalogpod

import "errors"

// Main does nothing here.
func Main() {}

// Supported says why containers cannot run here.
func Supported() error { return errors.New("running a catalog pod needs Linux namespaces") }
