package progress_test

import (
	"fmt"

	"github.com/flint-mesos/flint/framework/progress"
)

func ExampleRender() {
	fmt.Println(progress.Render([]progress.StageStatus{{StageID: 0, NumTasks: 100, Active: 8, Completed: 45}}, 50))
	fmt.Println(progress.PlainLine(progress.StageStatus{StageID: 0, NumTasks: 100, Active: 8, Completed: 45}))
	// Output:
	// [Stage 0:===========>              (45 + 8) / 100]
	// Stage 0: 45/100 tasks done, 8 running, 0 failed
}
