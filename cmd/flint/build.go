package main

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/flint-mesos/flint"
)

// jobBinary returns the executable to run for submit's JOB argument: a
// binary as is; a directory or a .go file is a job's source, built with
// `go build` into a directory under the user's cache (reused by the next
// submit of the same source; go's build cache makes unchanged rebuilds fast).
func jobBinary(ctx context.Context, job string, log io.Writer) (string, error) {
	fi, err := os.Stat(job)
	if err != nil {
		return "", flint.Usage(fmt.Errorf("submit: job %w", err), "flint submit --help")
	}
	if !fi.IsDir() && !strings.HasSuffix(job, ".go") {
		if fi.Mode()&0o111 == 0 {
			return "", flint.Usage(fmt.Errorf("submit: job %s is not executable (build it with `go build -o %s .` in its source directory)", job, filepath.Base(job)), "flint submit --help")
		}
		return job, nil
	}
	return buildJob(ctx, job, log)
}

func buildJob(ctx context.Context, src string, log io.Writer) (string, error) {
	abs, err := filepath.Abs(src)
	if err != nil {
		return "", fmt.Errorf("submit: %w", err)
	}
	dir, pkg := abs, "."
	if !isDir(abs) {
		dir, pkg = filepath.Dir(abs), filepath.Base(abs)
	}
	name := strings.TrimSuffix(filepath.Base(abs), ".go")
	hint := fmt.Sprintf("(cd %s && go build -o %s %s), then flint submit %s",
		dir, name, pkg, filepath.Join(dir, name))
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("submit: %s is Go source and no go command is on PATH to build it; build it yourself: %s", src, hint)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	outDir := filepath.Join(cache, "flint", "jobs", fmt.Sprintf("%x", fnv64(abs)))
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return "", fmt.Errorf("submit: %w", err)
	}
	out := filepath.Join(outDir, name)
	fmt.Fprintf(log, "flint: building %s: go build -o %s %s\n", src, out, pkg)
	cmd := exec.CommandContext(ctx, goBin, "build", "-o", out, pkg)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, log, log
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return "", fmt.Errorf("submit: go build of %s failed (its errors are above); fix them, or build it yourself: %s", src, hint)
		}
		return "", fmt.Errorf("submit: go build of %s: %w", src, err)
	}
	return out, nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func fnv64(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}
