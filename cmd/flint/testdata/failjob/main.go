// Command failjob is a job module outside Flint's module, built by the CLI
// tests the way a user builds their own job (go.work next to a clone). Its
// first argument picks how its tasks behave: ok, error, panic, exit (write
// to stderr and exit with status 3, killing the executor), sleep (until
// cancelled), lines (sleep, while the driver prints a line to stdout
// every 20 ms, ignoring write errors, until its context ends).
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

var behave = framework.Register("failjob.behave", func(ctx context.Context, in task) (int, error) {
	switch in.Mode {
	case "error":
		return 0, errors.New("task refused its input")
	case "panic":
		panic("failjob: boom")
	case "exit":
		fmt.Fprintln(os.Stderr, "FATAL: the disk is on fire")
		os.Exit(3)
	case "sleep", "lines":
		<-ctx.Done()
		return 0, ctx.Err()
	}
	return in.N * in.N, nil
})

type task struct {
	Mode string
	N    int
}

func main() {
	flint.Main(func(ctx context.Context, fc *framework.Context, args []string) error {
		mode := "ok"
		if len(args) > 0 {
			mode = args[0]
		}
		in := []task{{mode, 1}, {mode, 2}}
		fmt.Println("failjob: running", mode)
		if mode == "lines" {
			go func() {
				tick := time.NewTicker(20 * time.Millisecond)
				defer tick.Stop()
				for n := 1; ; n++ {
					select {
					case <-ctx.Done():
						return
					case <-tick.C:
						fmt.Println("failjob: line", n)
					}
				}
			}()
		}
		out, err := framework.Map(ctx, fc, behave, in, framework.WithJobName("failjob"))
		if err != nil {
			return err
		}
		fmt.Println("failjob: result", out)
		return nil
	})
}
