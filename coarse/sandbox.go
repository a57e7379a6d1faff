package coarse

import (
	"context"
	"fmt"
	"net/http"

	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/sandbox"
)

var _ backend.SandboxLocator = (*Backend)(nil)

// ExecutorSandbox implements backend.SandboxLocator through the master's
// and the agent's /state (the web UI reads the executor's stdout/stderr
// from there).
func (b *Backend) ExecutorSandbox(ctx context.Context, executorID string) (agentURL, dir string, err error) {
	conn := b.conn // set by Start, read-only after
	if !b.started.Load() {
		return "", "", fmt.Errorf("coarse: not connected to a Mesos master")
	}
	loc, err := sandbox.LocateExecutor(ctx, http.DefaultClient, sandbox.MasterURL(conn.Master()), conn.FrameworkID(), executorID)
	if err != nil {
		return "", "", fmt.Errorf("coarse: %w", err)
	}
	return loc.AgentURL, loc.Dir, nil
}
