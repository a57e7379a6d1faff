package executor_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/flint-mesos/flint/executor"
	"github.com/flint-mesos/flint/framework/task"
	"github.com/flint-mesos/flint/proto/flintpb"
)

func Example() {
	reg := task.NewRegistry()
	upper := task.MustRegister(reg, "upper", func(_ context.Context, s string) (string, error) {
		return strings.ToUpper(s), nil
	}, nil)

	done := make(chan *flintpb.StatusUpdate, 1)
	rt, err := executor.New(executor.Config{ExecutorID: "exec-1", Cores: 2, Registry: reg},
		func(u *flintpb.StatusUpdate) {
			if u.State != flintpb.TaskState_TASK_RUNNING {
				done <- u
			}
		})
	if err != nil {
		panic(err)
	}
	defer rt.Close(context.Background())

	input, _ := upper.EncodeInput("flint")
	_ = rt.Launch(&flintpb.TaskDescription{TaskId: 1, Function: upper.Name(), Codec: upper.Codec().Name(), Input: input})
	u := <-done
	out, _ := upper.DecodeOutput(u.Result.GetInline())
	fmt.Println(u.State, out)
	// Output: TASK_FINISHED FLINT
}
