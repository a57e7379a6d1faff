package agent_test

import (
	"fmt"

	"github.com/flint-mesos/flint/deploy/minimesos/agent"
)

func ExampleParseResources() {
	rs, err := agent.ParseResources("cpus:4;mem:2048;ports:[31000-32000]")
	if err != nil {
		panic(err)
	}
	for _, r := range rs {
		fmt.Println(r.Name, r.GetType())
	}
	attrs, _ := agent.ParseAttributes("rack:r1;zone:z2")
	fmt.Println(attrs[0].Name, attrs[0].Text.Value)
	// Output:
	// cpus SCALAR
	// mem SCALAR
	// ports RANGES
	// rack r1
}
