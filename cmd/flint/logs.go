package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/flint-mesos/flint/framework/sandbox"
	"github.com/flint-mesos/flint/internal/redact"
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
			s, err := sandbox.Locate(ctx, http.DefaultClient, baseURL(masterAddr), frameworkID, args[0])
			if err != nil {
				return fmt.Errorf("logs: %w", err)
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

// readSandboxFile copies a sandbox file through the agent's /files/read,
// page by page, URLs redacted (Mesos' fetcher logs the URIs it fetched,
// file server token included); with follow it polls for growth until ctx
// ends.
func readSandboxFile(ctx context.Context, out io.Writer, s sandbox.Sandbox, name string, follow bool) (err error) {
	w := redact.NewWriter(out)
	defer func() {
		if ferr := w.Flush(); err == nil {
			err = ferr
		}
	}()
	return copySandboxFile(ctx, w, s, name, follow)
}

func copySandboxFile(ctx context.Context, out io.Writer, s sandbox.Sandbox, name string, follow bool) error {
	var offset int64
	for {
		data, err := s.Read(ctx, http.DefaultClient, name, offset, 1<<20)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("logs: %w", err)
		}
		if _, err := io.WriteString(out, data); err != nil {
			return err
		}
		offset += int64(len(data))
		if len(data) > 0 {
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
