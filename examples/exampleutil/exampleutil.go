// Package exampleutil holds what the bundled examples share: checking
// their inputs and output before any cluster starts.
package exampleutil

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// CheckInputs checks that local input paths exist (other schemes are listed by the job) (globs match
// something) and, when output is set, that it does not hold anything.
func CheckInputs(example string, paths []string, output string) error {
	for _, p := range paths {
		if strings.Contains(p, "://") && !strings.HasPrefix(p, "file://") {
			continue // http(s)://, s3://: listed by the job
		}
		if strings.ContainsAny(p, "*?[") {
			if m, err := filepath.Glob(p); err != nil || len(m) == 0 {
				return fmt.Errorf("%s: input %s matches no file", example, p)
			}
			continue
		}
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s: input file %s does not exist", example, p)
		} else if err != nil {
			return fmt.Errorf("%s: input %w", example, err)
		}
	}
	if output != "" && !strings.Contains(output, "://") {
		if ents, err := os.ReadDir(output); err == nil && len(ents) > 0 {
			return fmt.Errorf("%s: output directory %s already exists and is not empty", example, output)
		}
	}
	return nil
}
