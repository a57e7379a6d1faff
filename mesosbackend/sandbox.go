package mesosbackend

import (
	"context"
	"errors"
	"net/http"

	"github.com/flint-mesos/flint/framework/sandbox"
)

// ErrNotConnected is ExecutorSandbox's error before the backend subscribed.
var ErrNotConnected = errors.New("not connected to a Mesos master")

// ExecutorSandbox locates an executor's sandbox through the master's and
// the agent's /state (the web UI reads the executor's stdout/stderr from
// there): both backends' backend.SandboxLocator. conn is nil until the
// backend has subscribed.
func ExecutorSandbox(ctx context.Context, conn Conn, executorID string) (agentURL, dir string, err error) {
	if conn == nil {
		return "", "", ErrNotConnected
	}
	loc, err := sandbox.LocateExecutor(ctx, http.DefaultClient, sandbox.MasterURL(conn.Master()), conn.FrameworkID(), executorID)
	if err != nil {
		return "", "", err
	}
	return loc.AgentURL, loc.Dir, nil
}
