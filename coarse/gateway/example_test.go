package gateway_test

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/flint-mesos/flint/coarse/gateway"
	"github.com/flint-mesos/flint/executor/coarseexec"
	"github.com/flint-mesos/flint/framework/task"
	"github.com/flint-mesos/flint/proto/flintpb"
)

// The driver serves a gateway, an executor connects with the application's
// secret, runs one task and is stopped.
func Example() {
	registered := make(chan gateway.ExecutorInfo, 1)
	finished := make(chan *flintpb.StatusUpdate, 1)
	lost := make(chan string, 1)
	secret := gateway.NewSecret()
	gw, err := gateway.New(gateway.Config{Secret: secret, Events: gateway.EventFuncs{
		Registered: func(info gateway.ExecutorInfo) { registered <- info },
		Update: func(u *flintpb.StatusUpdate) {
			if u.State != flintpb.TaskState_TASK_RUNNING {
				finished <- u
			}
		},
		Lost: func(id, reason string) { lost <- id + ": " + reason },
	}})
	if err != nil {
		panic(err)
	}
	defer gw.Close()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	if err := gw.Serve(lis); err != nil {
		panic(err)
	}

	// The executor side, normally another process started by Mesos with
	// FLINT_DRIVER_URL, FLINT_EXECUTOR_TOKEN, ... in its environment.
	reg := task.NewRegistry()
	double := task.MustRegister(reg, "double", func(_ context.Context, n int) (int, error) { return 2 * n, nil }, nil)
	runErr := make(chan error, 1)
	go func() {
		runErr <- coarseexec.Run(context.Background(), coarseexec.Config{
			DriverURL: gw.Addr().String(), ExecutorID: "exec-1", Cores: 2, Token: gateway.ExecutorToken(secret, "exec-1"),
			Host: "localhost", Timeout: 10 * time.Second, Registry: reg,
		})
	}()
	info := <-registered
	fmt.Printf("registered %s with %d cores\n", info.ID, info.Cores)

	input, _ := double.EncodeInput(21)
	_ = gw.Launch("exec-1", &flintpb.TaskDescription{TaskId: 1, Function: double.Name(), Codec: double.Codec().Name(), Input: input})
	u := <-finished
	out, _ := double.DecodeOutput(u.Result.GetInline())
	fmt.Println("task 1:", u.State, out)

	_ = gw.StopExecutor("exec-1", "job done")
	fmt.Println("Run returned:", <-runErr)
	fmt.Println("lost", <-lost)
	// Output:
	// registered exec-1 with 2 cores
	// task 1: TASK_FINISHED 42
	// Run returned: <nil>
	// lost exec-1: executor stopped: job done
}
