package cpuburn

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"sync"
	"syscall"
	"time"
)

// ErrUsage is wrapped by Run's errors about its command line.
var ErrUsage = errors.New("usage: cpuburn [-procs N] [-max 3h]")

// Run parses args (-procs, -max) and burns until ctx ends, a signal
// arrives, the parent process goes away or -max passes.
func Run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("cpuburn", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	procs := fs.Int("procs", runtime.NumCPU(), "busy goroutines (one per CPU by default)")
	maxRun := fs.Duration("max", 3*time.Hour, "exit after this long whatever happens")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w (%w)", err, ErrUsage)
	}
	if *procs < 1 || fs.NArg() > 0 {
		return fmt.Errorf("-procs must be at least 1 and no arguments follow the flags: %w", ErrUsage)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *maxRun)
	defer cancel()
	go watchParent(ctx, cancel, os.Getppid())
	var wg sync.WaitGroup
	for range *procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			burn(ctx)
		}()
	}
	wg.Wait()
	return nil
}

// burn spins until ctx ends, checking it every few million iterations.
func burn(ctx context.Context) {
	x := uint64(1)
	for ctx.Err() == nil {
		for range 1 << 22 {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	if x == 0 { // keeps the loop from being optimised away
		fmt.Fprintln(os.Stderr, "cpuburn: unreachable")
	}
}

// watchParent cancels once the process that started cpuburn is gone (the
// burner is re-parented), so an interrupted `make stress` leaves no burner.
func watchParent(ctx context.Context, cancel context.CancelFunc, parent int) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if os.Getppid() != parent {
				cancel()
				return
			}
		}
	}
}
