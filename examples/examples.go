package examples

import (
	"fmt"
	"sort"
	"strings"

	"github.com/flint-mesos/flint"
	"github.com/flint-mesos/flint/examples/pi"
	"github.com/flint-mesos/flint/examples/wordcount"
)

// Example is a bundled job.
type Example struct {
	Name, Usage string
	Run         flint.DriverFunc
}

var all = map[string]Example{
	"pi":        {Name: "pi", Usage: pi.Usage, Run: pi.Main},
	"wordcount": {Name: "wordcount", Usage: wordcount.Usage, Run: wordcount.Main},
}

// Lookup returns the example called name.
func Lookup(name string) (Example, error) {
	if e, ok := all[name]; ok {
		return e, nil
	}
	return Example{}, fmt.Errorf("examples: no example %q (available: %s)", name, strings.Join(Names(), ", "))
}

// Names lists the examples, sorted.
func Names() []string {
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
