//go:build tools

// Package reference pins the established addon-operator v1.5.0 for the
// bench, which builds its cmd/addon-operator from this module (see
// e2e/bench/reference.go), and the shell-operator v1.4.12 it requires,
// whose cmd/shell-operator the webhook bench runs beside ours (see
// e2e/bench/shelloperator.go). It is a module of its own, so the product's
// go.mod stays clean; its replace directives repeat those of
// github.com/flant/addon-operator's go.mod, which `go install ...@v1.5.0`
// refuses.
package reference

import (
	_ "github.com/flant/addon-operator/cmd/addon-operator"
	_ "github.com/flant/shell-operator/cmd/shell-operator"
)
