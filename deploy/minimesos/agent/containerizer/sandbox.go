package containerizer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrBadID: an id would escape the sandbox tree (empty, ".", "..", or contains "/" or NUL).
var ErrBadID = errors.New("containerizer: invalid id")

// CheckID validates an id used as a path component.
func CheckID(kind, id string) error {
	if id == "" || id == "." || id == ".." || strings.ContainsAny(id, "/\x00") {
		return fmt.Errorf("%w: %s %q", ErrBadID, kind, id)
	}
	return nil
}

// ExecutorDir is <work_dir>/slaves/<agent>/frameworks/<fw>/executors/<ex>.
func ExecutorDir(workDir, agentID, frameworkID, executorID string) string {
	return filepath.Join(workDir, "slaves", agentID, "frameworks", frameworkID, "executors", executorID)
}

// SandboxDir is ExecutorDir/runs/<container>, Mesos' sandbox of one run.
func SandboxDir(workDir, agentID, frameworkID, executorID, containerID string) string {
	return filepath.Join(ExecutorDir(workDir, agentID, frameworkID, executorID), "runs", containerID)
}

// CreateSandbox creates the sandbox of one run (mode 0755) and points
// runs/latest at it, as Mesos does.
func CreateSandbox(workDir, agentID, frameworkID, executorID, containerID string) (string, error) {
	for _, c := range [][2]string{{"agent", agentID}, {"framework", frameworkID}, {"executor", executorID}, {"container", containerID}} {
		if err := CheckID(c[0], c[1]); err != nil {
			return "", err
		}
	}
	dir := SandboxDir(workDir, agentID, frameworkID, executorID, containerID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("containerizer: create sandbox: %w", err)
	}
	latest := filepath.Join(filepath.Dir(dir), "latest")
	tmp := latest + ".tmp-" + containerID
	_ = os.Remove(tmp)
	if err := os.Symlink(containerID, tmp); err == nil {
		if err := os.Rename(tmp, latest); err != nil {
			_ = os.Remove(tmp)
		}
	}
	return dir, nil
}
