package mesosconn_test

import (
	"fmt"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/mesosconn"
)

func ExampleTake() {
	role := "*"
	offer := mesos.Resources{
		{Name: "cpus", Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: 4}, Role: &role},
		{Name: "mem", Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: 4096}, Role: &role},
		{Name: "ports", Type: mesos.RANGES.Enum(), Ranges: &mesos.Value_Ranges{Range: []mesos.Value_Range{{Begin: 31000, End: 31999}}}, Role: &role},
	}
	taken, rest, ok := mesosconn.Take(offer, mesosconn.Want{CPUs: 1.5, MemMB: 1024, Ports: 2})
	fmt.Println(ok)
	fmt.Println(taken)
	fmt.Println(rest)
	// Output:
	// true
	// cpus:1.5;mem:1024;ports:[31000-31001]
	// cpus:2.5;mem:3072;ports:[31002-31999]
}

func ExampleConfigFrom() {
	fc := config.New()
	_ = fc.Set("flint.master", "mesos://zk://zk1:2181,zk2:2181/mesos")
	_ = fc.Set("flint.mesos.role", "batch,analytics")
	_ = fc.Set("flint.mesos.rejectOfferDurationForReachedMaxCores", "30s")
	cfg, err := mesosconn.ConfigFrom(fc, mesosconn.WithFramework("http://driver:4040", "", nil))
	if err != nil {
		panic(err)
	}
	fmt.Println(cfg.Master, cfg.Roles, cfg.WebUIURL)
	fmt.Println(cfg.RefuseSeconds[mesosconn.DeclineNoDemand], cfg.RefuseSeconds[mesosconn.DeclineReachedMaxCores])
	// Output:
	// mesos://zk://zk1:2181,zk2:2181/mesos [batch analytics] http://driver:4040
	// 2m0s 30s
}
