//go:build tools

// Package flint pins the build tools that `make generate` runs, so their
// versions come from go.mod.
package flint

import (
	_ "github.com/gogo/protobuf/protoc-gen-gogofaster"
)
