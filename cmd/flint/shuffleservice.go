package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/flint-mesos/flint/shuffle/shuffleservice"
)

// shuffleServiceOptions are `flint shuffle-service`'s flags.
type shuffleServiceOptions struct {
	dir, host  string
	port       int
	appTimeout time.Duration
	noTLS      bool
}

func shuffleServiceCommand() *cobra.Command {
	var o shuffleServiceOptions
	cmd := &cobra.Command{
		Use:   "shuffle-service --dir DIR",
		Short: "Serve the shuffle files of executors on this agent, so released executors' outputs stay readable",
		Long: "Run on every Mesos agent (Spark's MesosExternalShuffleService): executors of applications with " +
			"flint.shuffle.service.enabled=true keep their shuffle files under DIR (their flint.shuffle.service.dir) " +
			"and this process serves them to reducers, whether or not the executor still runs — what dynamic " +
			"allocation needs to release executors without losing map outputs. Requests need the application's " +
			"token; TLS with a pinned self-signed certificate is on unless --no-tls. Run it as root or as the user " +
			"executors run as. An application whose driver has not been heard from for --app-timeout is removed.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runShuffleService(ctx, cmd.OutOrStdout(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.dir, "dir", "", "the service's directory: the same path as executors' flint.shuffle.service.dir; required")
	f.StringVar(&o.host, "host", "", "name or IP reducers reach this agent at (default: this host's name)")
	f.IntVar(&o.port, "port", 7337, "port to listen on (Spark's shuffle service port); 0 picks a free one")
	f.DurationVar(&o.appTimeout, "app-timeout", 2*time.Minute, "remove an application's files when its driver has not been heard from for this long")
	f.BoolVar(&o.noTLS, "no-tls", false, "serve plain HTTP (trusted networks only): faster (sendfile), but blocks travel in clear")
	_ = cmd.MarkFlagRequired("dir")
	return cmd
}

// runShuffleService serves until ctx ends, printing where to out.
func runShuffleService(ctx context.Context, out io.Writer, o shuffleServiceOptions) error {
	if o.appTimeout <= 0 {
		return fmt.Errorf("shuffle-service: --app-timeout is %v; it must be > 0", o.appTimeout)
	}
	host := o.host
	if host == "" {
		h, err := os.Hostname()
		if err != nil {
			return fmt.Errorf("shuffle-service: --host not given and no hostname: %w", err)
		}
		host = h
	}
	svc, err := shuffleservice.Start(shuffleservice.Config{Dir: o.dir, Host: host, Port: o.port, TLS: !o.noTLS, AppTimeout: o.appTimeout})
	if err != nil {
		return fmt.Errorf("shuffle-service: %w", err)
	}
	fmt.Fprintf(out, "flint shuffle-service: serving %s at %s\n", o.dir, svc.Address().BaseURL())
	<-ctx.Done()
	return svc.Close()
}
