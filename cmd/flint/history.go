package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/flint-mesos/flint/framework/history"
	"github.com/flint-mesos/flint/framework/webui"
)

// historyOptions are `flint history`'s flags.
type historyOptions struct {
	dir, host, token string
	port             int
	noAuth           bool
}

func historyCommand() *cobra.Command {
	var o historyOptions
	cmd := &cobra.Command{
		Use:   "history --dir DIR",
		Short: "Serve the web UI and REST API of finished and running applications from their event logs",
		Long: "Serve the jobs, stages, executors and environment of every application whose event log is in DIR " +
			"(flint.eventLog.dir of drivers run with flint.eventLog.enabled=true), with the same pages and REST API " +
			"(/api/v1) as a running driver. Logs still being written are re-read as they grow; a damaged log is shown " +
			"up to the damage, with a warning. Every request needs the printed sign-in link's token unless --no-auth.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return serveHistory(ctx, cmd.OutOrStdout(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.dir, "dir", "", "directory of event logs (flint.eventLog.dir); required")
	f.StringVar(&o.host, "host", "", "address to listen on (default: every interface)")
	f.IntVar(&o.port, "port", 18080, "port to listen on (Spark's history server port); 0 picks a free one")
	f.StringVar(&o.token, "token", "", "token clients must present (default: a random one, printed in the sign-in link)")
	f.BoolVar(&o.noAuth, "no-auth", false, "serve anyone who can reach the port (trusted networks only; see docs/ui.md)")
	_ = cmd.MarkFlagRequired("dir")
	return cmd
}

// serveHistory serves o.dir until ctx ends, printing where to out.
func serveHistory(ctx context.Context, out io.Writer, o historyOptions) error {
	fi, err := os.Stat(o.dir)
	if err != nil {
		return fmt.Errorf("history: --dir: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("history: --dir %s is not a directory", o.dir)
	}
	token := o.token
	if o.noAuth {
		token = ""
	} else if token == "" {
		var b [24]byte
		_, _ = rand.Read(b[:])
		token = hex.EncodeToString(b[:])
	}
	lis, err := net.Listen("tcp", net.JoinHostPort(o.host, strconv.Itoa(o.port)))
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	h := webui.Handler(history.New(o.dir), webui.Options{Token: token, Title: "Flint history", History: true})
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	host := o.host
	if host == "" || host == "0.0.0.0" || host == "::" {
		if host, err = os.Hostname(); err != nil {
			host = "localhost"
		}
	}
	url := "http://" + net.JoinHostPort(host, strconv.Itoa(lis.Addr().(*net.TCPAddr).Port))
	if token == "" {
		fmt.Fprintf(out, "Flint history server for %s at %s (no token: --no-auth)\n", o.dir, url)
	} else {
		fmt.Fprintf(out, "Flint history server for %s at %s\nsign in: %s/?token=%s\n", o.dir, url, url, token)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	select {
	case err = <-served:
		return fmt.Errorf("history: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("history: %w", err)
	}
	return nil // stopped by SIGINT or SIGTERM: a server's normal end
}
