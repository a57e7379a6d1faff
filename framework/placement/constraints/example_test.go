package constraints_test

import (
	"fmt"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/framework/placement/constraints"
)

func Example() {
	cs, err := constraints.Parse("os:centos7,ubuntu;zone:us-east-1a;gpu")
	if err != nil {
		panic(err)
	}
	offer := []mesos.Attribute{
		{Name: "os", Type: mesos.TEXT, Text: &mesos.Value_Text{Value: "ubuntu"}},
		{Name: "zone", Type: mesos.TEXT, Text: &mesos.Value_Text{Value: "us-east-1b"}},
	}
	fmt.Println(cs.Match(offer))
	fmt.Println(cs.Check(offer))
	_, err = constraints.Parse("os:centos7;;gpu")
	fmt.Println(err)
	// Output:
	// false
	// constraints: unmet: attribute "zone" is "us-east-1b", want one of us-east-1a; attribute "gpu" missing
	// constraints: empty term (two ';' in a row, or a leading/trailing ';') at offset 11 ("") in "os:centos7;;gpu"
}
