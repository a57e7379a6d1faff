package codec_test

import (
	"fmt"

	"github.com/flint-mesos/flint/framework/codec"
)

func ExampleLookup() {
	c, err := codec.Lookup("json")
	if err != nil {
		panic(err)
	}
	data, _ := c.Marshal(struct{ Word string }{"flint"})
	fmt.Println(c.Name(), string(data))
	_, err = codec.Lookup("yaml")
	fmt.Println(err != nil)
	// Output:
	// json {"Word":"flint"}
	// true
}
