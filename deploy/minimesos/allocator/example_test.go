package allocator_test

import (
	"fmt"
	"math/rand/v2"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/resources"

	"github.com/flint-mesos/flint/deploy/minimesos/allocator"
)

func Example() {
	a, err := allocator.New(allocator.Config{MaxOutstandingOffers: 10}, rand.New(rand.NewPCG(42, 0)))
	if err != nil {
		panic(err)
	}
	now := time.Unix(0, 0)
	a.AddFramework(allocator.FrameworkInfo{ID: "fw-1", Roles: []string{"spark"}}, true, nil)
	a.AddAgent("S1", "node1", mesos.Resources{
		resources.NewCPUs(4).Resource,
		resources.NewMemory(8192).Resource,
	}, nil)

	offers := a.Allocate(now)
	for _, o := range offers {
		fmt.Printf("%s gets %s on %s as %s\n", o.FrameworkID, o.Resources, o.Hostname, o.Role)
	}

	// The framework declines with refuse_seconds=10: not re-offered before then.
	a.OfferAnswered("fw-1")
	refuse := 10 * time.Second
	a.Recover("S1", "fw-1", offers[0].Resources, &refuse, now)
	fmt.Println(len(a.Allocate(now.Add(5*time.Second))), "offers after 5s")
	fmt.Println(len(a.Allocate(now.Add(10*time.Second))), "offer after 10s")
	// Output:
	// fw-1 gets cpus:4;mem:8192 on node1 as spark
	// 0 offers after 5s
	// 1 offer after 10s
}
