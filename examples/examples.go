package examples

import (
	"fmt"
	"sort"
	"strings"

	"github.com/flint-mesos/flint"
	"github.com/flint-mesos/flint/examples/events"
	"github.com/flint-mesos/flint/examples/join"
	"github.com/flint-mesos/flint/examples/pagerank"
	"github.com/flint-mesos/flint/examples/pi"
	"github.com/flint-mesos/flint/examples/sortlines"
	"github.com/flint-mesos/flint/examples/wordcount"
)

// Example is a bundled job.
type Example struct {
	Name, Usage string
	Run         flint.DriverFunc
	// Check validates the arguments before any cluster starts.
	Check func(args []string) error
}

var all = map[string]Example{
	"pi":        {Name: "pi", Usage: pi.Usage, Run: pi.Main, Check: pi.Check},
	"sort":      {Name: "sort", Usage: sortlines.Usage, Run: sortlines.Main, Check: sortlines.Check},
	"events":    {Name: "events", Usage: events.Usage, Run: events.Main, Check: events.Check},
	"join":      {Name: "join", Usage: join.Usage, Run: join.Main, Check: join.Check},
	"pagerank":  {Name: "pagerank", Usage: pagerank.Usage, Run: pagerank.Main, Check: pagerank.Check},
	"wordcount": {Name: "wordcount", Usage: wordcount.Usage, Run: wordcount.Main, Check: wordcount.Check},
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
