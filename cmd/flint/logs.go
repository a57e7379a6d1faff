package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
)

func mesosLogsCommand() *cobra.Command {
	var masterAddr, frameworkID string
	var stderr, follow bool
	cmd := &cobra.Command{
		Use:   "logs TASK-ID",
		Short: "Print (or follow) a task's stdout or stderr from its sandbox, found through the master",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			file := "stdout"
			if stderr {
				file = "stderr"
			}
			s, err := locateSandbox(ctx, baseURL(masterAddr), frameworkID, args[0])
			if err != nil {
				return err
			}
			return readSandboxFile(ctx, cmd.OutOrStdout(), s, file, follow)
		},
	}
	cmd.Flags().StringVar(&masterAddr, "master", "127.0.0.1:5050", "master address, host:port")
	cmd.Flags().StringVar(&frameworkID, "framework", "", "framework id (when task ids repeat across frameworks)")
	cmd.Flags().BoolVar(&stderr, "stderr", false, "print stderr instead of stdout")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing as the file grows (until interrupted)")
	return cmd
}

func baseURL(addr string) string {
	if strings.Contains(addr, "://") {
		return strings.TrimSuffix(addr, "/")
	}
	return "http://" + addr
}

// sandbox locates a task's sandbox: the agent serving it and the directory.
type sandbox struct {
	agentURL, dir string
}

type masterState struct {
	Slaves []struct {
		ID  string `json:"id"`
		PID string `json:"pid"`
	} `json:"slaves"`
	Frameworks          []stateFramework `json:"frameworks"`
	CompletedFrameworks []stateFramework `json:"completed_frameworks"`
}

type stateFramework struct {
	ID             string      `json:"id"`
	Tasks          []stateTask `json:"tasks"`
	CompletedTasks []stateTask `json:"completed_tasks"`
}

type stateTask struct {
	ID          string `json:"id"`
	FrameworkID string `json:"framework_id"`
	ExecutorID  string `json:"executor_id"`
	SlaveID     string `json:"slave_id"`
}

func getJSON(ctx context.Context, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	return nil
}

func findTask(st *masterState, frameworkID, taskID string) (stateTask, error) {
	var found []stateTask
	for _, fws := range [][]stateFramework{st.Frameworks, st.CompletedFrameworks} {
		for _, fw := range fws {
			if frameworkID != "" && fw.ID != frameworkID {
				continue
			}
			for _, ts := range [][]stateTask{fw.Tasks, fw.CompletedTasks} {
				for _, t := range ts {
					if t.ID == taskID {
						found = append(found, t)
					}
				}
			}
		}
	}
	switch {
	case len(found) == 0:
		return stateTask{}, fmt.Errorf("logs: the master knows no task %q", taskID)
	case len(found) > 1 && frameworkID == "":
		return stateTask{}, fmt.Errorf("logs: task %q exists in several frameworks; pick one with --framework", taskID)
	}
	return found[len(found)-1], nil
}

// locateSandbox asks the master where the task ran and the agent where its
// work dir is; the sandbox is Mesos' layout under it, run "latest".
func locateSandbox(ctx context.Context, master, frameworkID, taskID string) (sandbox, error) {
	var st masterState
	if err := getJSON(ctx, master+"/state", &st); err != nil {
		return sandbox{}, fmt.Errorf("logs: %w", err)
	}
	t, err := findTask(&st, frameworkID, taskID)
	if err != nil {
		return sandbox{}, err
	}
	var agentURL string
	for _, s := range st.Slaves {
		if s.ID == t.SlaveID {
			_, hostPort, _ := strings.Cut(s.PID, "@")
			agentURL = "http://" + hostPort
		}
	}
	if agentURL == "" {
		return sandbox{}, fmt.Errorf("logs: task %q ran on agent %s, which the master no longer lists", taskID, t.SlaveID)
	}
	var ast struct {
		Flags map[string]string `json:"flags"`
	}
	if err := getJSON(ctx, agentURL+"/state", &ast); err != nil {
		return sandbox{}, fmt.Errorf("logs: agent %s: %w", t.SlaveID, err)
	}
	executor := t.ExecutorID
	if executor == "" {
		executor = t.ID // command tasks: the executor id is the task id
	}
	dir := path.Join(ast.Flags["work_dir"], "slaves", t.SlaveID, "frameworks", t.FrameworkID, "executors", executor, "runs", "latest")
	return sandbox{agentURL: agentURL, dir: dir}, nil
}

// readSandboxFile copies a sandbox file through the agent's /files/read,
// page by page; with follow it polls for growth until ctx ends.
func readSandboxFile(ctx context.Context, out io.Writer, s sandbox, name string, follow bool) error {
	var offset int64
	for {
		var page struct {
			Data   string `json:"data"`
			Offset int64  `json:"offset"`
		}
		q := url.Values{"path": {path.Join(s.dir, name)}, "offset": {fmt.Sprint(offset)}, "length": {fmt.Sprint(1 << 20)}}
		if err := getJSON(ctx, s.agentURL+"/files/read?"+q.Encode(), &page); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("logs: %w", err)
		}
		if _, err := io.WriteString(out, page.Data); err != nil {
			return err
		}
		offset += int64(len(page.Data))
		if len(page.Data) > 0 {
			continue
		}
		if !follow {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
		}
	}
}
