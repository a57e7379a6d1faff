package scheduler_test

import (
	"fmt"
	"time"

	"github.com/flint-mesos/flint/framework/scheduler"
)

func Example() {
	cfg := scheduler.DefaultConfig()
	s, err := scheduler.New(cfg, nil) // nil rng: offers keep their order
	if err != nil {
		panic(err)
	}
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	_ = s.Submit(scheduler.TaskSet{ID: "job1-stage0", JobID: 1, Tasks: make([]scheduler.TaskSpec, 2)}, now)
	launches := s.ResourceOffers([]scheduler.WorkerOffer{{ExecutorID: "e1", Host: "h1", Cores: 4}}, now)
	for _, l := range launches {
		fmt.Println("launch", l.TaskSetID, l.Index, "on", l.ExecutorID, l.Locality)
	}
	for _, l := range launches {
		for _, ev := range s.StatusUpdate(l.TaskID, scheduler.Update{State: scheduler.Finished}, now.Add(time.Second)) {
			fmt.Printf("%T\n", ev)
		}
	}
	fmt.Println("wants offers:", s.WantsOffers())
	// Output:
	// launch job1-stage0 0 on e1 PROCESS_LOCAL
	// launch job1-stage0 1 on e1 PROCESS_LOCAL
	// scheduler.TaskSucceeded
	// scheduler.TaskSucceeded
	// scheduler.TaskSetFinished
	// wants offers: false
}
