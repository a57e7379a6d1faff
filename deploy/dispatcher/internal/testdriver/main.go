// Command testdriver is a Flint program the dispatcher's tests submit in
// cluster mode. Its first argument picks what its driver does:
//
//	sleep         wait until cancelled (a kill, SIGTERM)
//	fail          fail at once (exit status 1)
//	once MARKER   fail when MARKER does not exist (creating it), succeed when it does:
//	              a supervised driver fails once and succeeds when relaunched
//	crash-once MARKER  when MARKER does not exist: create it, wait for MARKER.crash and
//	              exit at once with status 3 (no Stop: the framework stays registered,
//	              as when a driver crashes); when it does: succeed
//	until FILE    succeed once FILE exists (checked every 100 ms): a driver the test
//	              ends when it chooses
//	files NAME…   print what the driver reads from ./NAME in its working directory (if
//	              there) and what two tasks read from TaskContext.File(NAME), for each NAME
//	              (flint submit --files)
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/flint-mesos/flint"
	"github.com/flint-mesos/flint/framework"
)

func main() {
	flint.Main(func(ctx context.Context, fc *framework.Context, args []string) error {
		if len(args) == 0 {
			return errors.New("testdriver: want sleep, fail or once MARKER")
		}
		fmt.Println("testdriver:", args[0])
		switch args[0] {
		case "sleep":
			<-ctx.Done()
			return ctx.Err()
		case "fail":
			return errors.New("testdriver: failing as asked")
		case "crash-once":
			if len(args) < 2 {
				return errors.New("testdriver: crash-once needs a marker file")
			}
			if _, err := os.Stat(args[1]); err == nil {
				fmt.Println("testdriver: relaunched, succeeding")
				return nil
			}
			if err := os.WriteFile(args[1], []byte("ran\n"), 0o644); err != nil {
				return err
			}
			for {
				if _, err := os.Stat(args[1] + ".crash"); err == nil {
					os.Exit(3)
				}
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(100 * time.Millisecond):
				}
			}
		case "until":
			if len(args) < 2 {
				return errors.New("testdriver: until needs a file")
			}
			for {
				if _, err := os.Stat(args[1]); err == nil {
					fmt.Println("testdriver: done")
					return nil
				}
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(100 * time.Millisecond):
				}
			}
		case "files":
			return printFiles(ctx, fc, args[1:])
		case "once":
			if len(args) < 2 {
				return errors.New("testdriver: once needs a marker file")
			}
			if _, err := os.Stat(args[1]); err == nil {
				fmt.Println("testdriver: second run succeeds")
				return nil
			}
			if err := os.WriteFile(args[1], []byte("ran\n"), 0o644); err != nil {
				return err
			}
			return errors.New("testdriver: first run fails")
		}
		return fmt.Errorf("testdriver: unknown mode %q", args[0])
	})
}

// readFile is a task reading an added file by its name.
var readFile = framework.Register("testdriver.readFile", func(ctx context.Context, name string) (string, error) {
	p, err := framework.TaskContextOf(ctx).File(name)
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(p)
	return string(b), err
})

func printFiles(ctx context.Context, fc *framework.Context, names []string) error {
	for _, n := range names {
		if b, err := os.ReadFile(n); err == nil {
			fmt.Printf("testdriver: driver read %s: %q\n", n, b)
		}
		out, err := framework.Map(ctx, fc, readFile, []string{n, n})
		if err != nil {
			return err
		}
		for i, v := range out {
			fmt.Printf("testdriver: task %d read %s: %q\n", i, n, v)
		}
	}
	return nil
}
