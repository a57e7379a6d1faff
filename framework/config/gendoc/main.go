// Command gendoc writes docs/configuration.md from Flint's configuration key table.
// Run it from the repository root: go run ./framework/config/gendoc
package main

import (
	"fmt"
	"os"

	"github.com/flint-mesos/flint/framework/config"
)

func main() {
	out := "docs/configuration.md"
	if len(os.Args) > 1 {
		out = os.Args[1]
	}
	if err := os.WriteFile(out, config.Markdown(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "gendoc:", err)
		os.Exit(1)
	}
}
