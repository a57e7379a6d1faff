package e2e

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ory/dockertest/v3"
	dc "github.com/ory/dockertest/v3/docker"
	"go.uber.org/goleak"
)

// runID names everything this test binary creates in Docker (image tag,
// container and network names, the flint-e2e label), so that runs sharing a
// daemon do not collide and leftovers of a crashed run can be found:
// docker ps -a --filter label=flint-e2e.
var runID = newRunID()

func newRunID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// env is what every test shares: the Docker pool, the image and the static
// flint binary inside it, set up by the first test that needs them (setup)
// and removed when the binary ends. The build is once per test binary: every
// suite (the dispatcher's too) starts its containers from this image.
var env struct {
	once  sync.Once
	err   error
	pool  *dockertest.Pool
	image string // repository:tag
	built bool
	took  time.Duration
	// binDir holds flint, the static binary built into the image: the
	// dispatcher suite's host-side `flint submit` runs (and uploads) it.
	binDir string
	// execOnce builds execImage (executorImage), the image without its
	// ENTRYPOINT, on first use.
	execOnce  sync.Once
	execErr   error
	execImage string
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(runThenTeardown{m}) }

// runThenTeardown tears the shared image down after the tests and before
// goleak looks for leaked goroutines.
type runThenTeardown struct{ m *testing.M }

func (r runThenTeardown) Run() int {
	code := r.m.Run()
	teardown()
	return code
}

// setup returns the pool and the image, building the image on first use.
// Without a reachable Docker daemon the test fails (never skips).
func setup(t *testing.T) (*dockertest.Pool, string) {
	t.Helper()
	env.once.Do(func() {
		start := time.Now()
		env.err = buildImage()
		env.took = time.Since(start)
	})
	if env.err != nil {
		t.Fatalf("e2e setup: %v", env.err)
	}
	return env.pool, env.image
}

// staticFlint is the static linux flint binary the image holds (built by
// setup, once): tests that run flint on the host use it rather than linking
// another.
func staticFlint(t *testing.T) string {
	t.Helper()
	setup(t)
	return filepath.Join(env.binDir, "flint")
}

func buildImage() error {
	pool, err := dockertest.NewPool("")
	if err != nil {
		return fmt.Errorf("the Docker end-to-end tests need a Docker daemon (DOCKER_HOST, or /var/run/docker.sock): %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := pool.Client.PingWithContext(ctx); err != nil {
		return fmt.Errorf("the Docker end-to-end tests need a reachable Docker daemon at %s (set DOCKER_HOST, or start dockerd): %w",
			pool.Client.Endpoint(), err)
	}
	env.pool = pool
	dir, err := buildContext()
	if dir != "" {
		defer os.RemoveAll(dir)
	}
	if err != nil {
		return err
	}
	image := "flint-e2e:" + runID
	var out bytes.Buffer
	bctx, bcancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer bcancel()
	err = pool.Client.BuildImage(dc.BuildImageOptions{
		Name: image, ContextDir: dir, Dockerfile: "Dockerfile", OutputStream: &out,
		RmTmpContainer: true, ForceRmTmpContainer: true, Labels: map[string]string{"flint-e2e": runID}, Context: bctx,
	})
	if err != nil {
		return fmt.Errorf("docker build of %s (FROM scratch, no registry needed): %w\n%s", image, err, out.String())
	}
	env.image, env.built = image, true
	return nil
}

// buildContext is a temporary Docker build context: deploy/docker's
// Dockerfile and rootfs (etc/passwd, etc/group), an empty rootfs/tmp with
// mode 1777 and a static flint binary.
func buildContext() (string, error) {
	root, err := filepath.Abs("..")
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "flint-e2e-image-")
	if err != nil {
		return "", err
	}
	src := filepath.Join(root, "deploy", "docker")
	for _, f := range []string{"Dockerfile", "rootfs/etc/passwd", "rootfs/etc/group"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			return dir, fmt.Errorf("image context: %w", err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			return dir, err
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			return dir, err
		}
	}
	tmp := filepath.Join(dir, "rootfs", "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return dir, err
	}
	if err := os.Chmod(tmp, 0o1777); err != nil {
		return dir, err
	}
	if env.binDir, err = os.MkdirTemp("", "flint-e2e-bin-"); err != nil {
		return dir, err
	}
	// One go build links both programs (flint and the suite's burst
	// driver, e2e/internal/burst) into binDir.
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", env.binDir+"/", "./cmd/flint", "./e2e/internal/burst")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if out, err := cmd.CombinedOutput(); err != nil {
		return dir, fmt.Errorf("building static flint and burst binaries for the image (CGO_ENABLED=0 go build ./cmd/flint ./e2e/internal/burst): %w\n%s", err, out)
	}
	for _, name := range []string{"flint", "burst"} {
		// A hard link when the temp dirs share a file system, else a copy.
		if err := os.Link(filepath.Join(env.binDir, name), filepath.Join(dir, name)); err != nil {
			if err := copyFile(filepath.Join(env.binDir, name), filepath.Join(dir, name)); err != nil {
				return dir, fmt.Errorf("image context: %w", err)
			}
		}
	}
	// The suite's own program goes into its image only, not into
	// deploy/docker's.
	f, err := os.OpenFile(filepath.Join(dir, "Dockerfile"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return dir, err
	}
	_, err = f.WriteString("\n# e2e only: the dynamic-allocation driver (e2e/internal/burst)\nCOPY burst /burst\n")
	return dir, errors.Join(err, f.Close())
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o755)
}

// teardown removes the image and closes the Docker client's idle
// connections (their goroutines would otherwise count as leaks).
func teardown() {
	if env.binDir != "" {
		_ = os.RemoveAll(env.binDir)
	}
	if env.pool == nil {
		return
	}
	if env.execImage != "" { // before its parent
		if err := env.pool.Client.RemoveImageExtended(env.execImage, dc.RemoveImageOptions{Force: true}); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: removing image %s: %v\n", env.execImage, err)
		}
	}
	if env.built {
		if err := env.pool.Client.RemoveImageExtended(env.image, dc.RemoveImageOptions{Force: true}); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: removing image %s: %v\n", env.image, err)
		}
	}
	env.pool.Client.HTTPClient.CloseIdleConnections()
}

// executorImage is the suite's image without its ENTRYPOINT, for
// executors under the Docker containerizer: Mesos runs `docker run IMAGE
// COMMAND ARGS…`, so an ENTRYPOINT would get the executor's command as
// its arguments (see flint.mesos.executor.docker.image). It is built
// once, FROM the suite's image (local: nothing is pulled), and removed
// when the test binary ends.
func executorImage(t *testing.T) string {
	t.Helper()
	setup(t)
	env.execOnce.Do(func() { env.execErr = buildExecutorImage() })
	if env.execErr != nil {
		t.Fatalf("e2e setup: %v", env.execErr)
	}
	return env.execImage
}

func buildExecutorImage() error {
	var ctxTar bytes.Buffer
	tw := tar.NewWriter(&ctxTar)
	dockerfile := []byte("FROM " + env.image + "\nENTRYPOINT []\n")
	if err := tw.WriteHeader(&tar.Header{Name: "Dockerfile", Mode: 0o644, Size: int64(len(dockerfile))}); err != nil {
		return err
	}
	if _, err := tw.Write(dockerfile); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	image := "flint-e2e-exec:" + runID
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := env.pool.Client.BuildImage(dc.BuildImageOptions{
		Name: image, InputStream: &ctxTar, OutputStream: &out, RmTmpContainer: true, ForceRmTmpContainer: true,
		Labels: map[string]string{"flint-e2e": runID}, Context: ctx,
	})
	if err != nil {
		return fmt.Errorf("docker build of %s (FROM %s, no ENTRYPOINT): %w\n%s", image, env.image, err, out.String())
	}
	env.execImage = image
	return nil
}
