package dataset

import (
	"bytes"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/dagscheduler"
	"github.com/flint-mesos/flint/framework/scheduler"
)

// errActionFailed marks an action's error so Run can report the first one
// even when a body wraps or drops it.
var errActionFailed = errors.New("dataset: action failed")

// errReplayed is what an action returns on an executor once the graph the
// task needs is rebuilt: the rest of the body must not run there.
var errReplayed = errors.New("dataset: graph rebuilt on an executor; the job body stops here (return action errors from the body)")

// Builder builds one run of a job: the datasets its body creates, the
// values frozen on the driver, and its actions. A job's body gets one;
// every executor that runs a task of the job gets its own, replaying the
// same body with the same arguments and the driver's frozen values.
type Builder struct {
	job   string
	args  []byte
	nodes []node
	sites map[string]int
	// shuffles by id (index): the writer side of each wide dependency.
	shuffles []*shuffleDef
	// values frozen on the driver (b.Value, input listings, sampled
	// bounds, action results), by key, in the order they were made.
	values   map[string][]byte
	valueSeq []string
	actions  int
	// accumulators by id (creation order)
	accums []accumulator
	// broadcasts in creation order
	broadcasts []broadcastHandle

	// driver side
	run      *runner
	fc       *framework.Context
	err      error // the first failed action's error
	buildErr error // a source that cannot be planned

	// st is the application's state in this process: on the driver the
	// Context's environment's (its runner's), on an executor the one its
	// task runs in (broadcast copies)
	st *state

	// executor side
	replay *replay
	lazy   []func() error // encodings of action results, done when next needed

	settings settings
	// checkpointDir is SetCheckpointDir's directory ("": flint.checkpoint.dir)
	checkpointDir string
}

// settings are configuration the graph depends on, read on the driver and
// frozen with the job.
type settings struct {
	DefaultParallelism int
	// ParallelismSet: flint.default.parallelism is set, so wide
	// operations use it rather than their inputs' partition counts.
	ParallelismSet    bool
	MaxPartitionBytes int64
	OpenCostInBytes   int64 // flint.files.openCostInBytes
	// StorageMemory is each executor's budget for cached partitions
	// (flint.storage.memory, else flint.storage.memoryFraction of
	// flint.executor.memory).
	StorageMemory int64
}

// replay is an executor's rebuild: stop at action stopAt and capture the
// graph there.
type replay struct {
	stopAt   int
	captured *capture
}

// capture is the graph as it stood when the task's action was called, with
// that action's per-partition function.
type capture struct {
	b       *Builder
	nodes   []node
	final   node
	perPart func(tc *taskContext, p int) ([]byte, error)
	op      string
}

func newDriverBuilder(job string, args []byte, r *runner, fc *framework.Context) *Builder {
	b := &Builder{job: job, args: args, sites: map[string]int{}, values: map[string][]byte{}, run: r, fc: fc}
	if r != nil {
		b.st = r.st
	} else {
		b.st = driverState(fc)
	}
	b.settings = settings{DefaultParallelism: 2, MaxPartitionBytes: 128 << 20, OpenCostInBytes: 4 << 20, StorageMemory: 300 << 20}
	if fc != nil {
		b.settings.DefaultParallelism = defaultParallelism(fc)
		b.settings.ParallelismSet = fc.Config().IsSet("flint.default.parallelism")
		b.settings.MaxPartitionBytes = fc.Config().Size("flint.files.maxPartitionBytes")
		b.settings.OpenCostInBytes = fc.Config().Size("flint.files.openCostInBytes")
		b.settings.StorageMemory = storageMemory(fc.Config())
	}
	// Settings ride with the job like any frozen value.
	b.freeze("flint.settings", func() any { return b.settings }, &b.settings)
	return b
}

// storageMemory is flint.storage.memory, else flint.storage.memoryFraction
// of flint.executor.memory.
func storageMemory(c *config.Config) int64 {
	if c.IsSet("flint.storage.memory") && c.Size("flint.storage.memory") > 0 {
		return c.Size("flint.storage.memory")
	}
	return int64(c.Float64("flint.storage.memoryFraction") * float64(c.Size("flint.executor.memory")))
}

func newReplayBuilder(job string, args []byte, values map[string][]byte, stopAt int) *Builder {
	b := &Builder{job: job, args: args, sites: map[string]int{}, values: values, replay: &replay{stopAt: stopAt}}
	b.freeze("flint.settings", func() any { return b.settings }, &b.settings)
	return b
}

// Driver reports whether this is the driver's run of the body (false on
// executors rebuilding the graph). Side effects belong on the driver.
func (b *Builder) Driver() bool { return b.replay == nil }

// Out is where a body prints its results: standard output on the driver,
// io.Discard on executors replaying the body.
func (b *Builder) Out() io.Writer {
	if b.Driver() {
		return os.Stdout
	}
	return io.Discard
}

// DefaultParallelism is the number of partitions sources use when not
// told, and wide operations when flint.default.parallelism is set
// (flint.default.parallelism, else the backend's cores, at least 2). Wide
// operations not told otherwise keep an input's partitioner when Spark's
// defaultPartitioner would, else take their largest input's partition
// count when flint.default.parallelism is not set.
func (b *Builder) DefaultParallelism() int { return b.settings.DefaultParallelism }

// Value returns fn's result, computed once on the driver and frozen with
// the job under key: executors rebuilding the graph get the driver's
// value instead of calling fn. Use it for anything that could differ
// between processes — the time, random seeds, listings, values read from
// outside. T must be gob-encodable. Keys must be unique in a job.
//
// A result the executors would not get as it is — one holding a func, a
// chan, an unsafe.Pointer, a non-zero unexported field or a cycle — is
// refused on the driver: Value returns it unchanged there, and the job's
// next action fails with one error naming the field, its type and why
// (ErrValueCannotTravel), before any task runs.
func Value[T any](b *Builder, key string, fn func() T) T {
	var v, refused T
	bad := false
	b.freeze("user:"+key, func() any {
		x := fn()
		if err := checkTravel(fmt.Sprintf("Value(%q)", key), x, gobRules); err != nil {
			b.fail(fmt.Errorf("%w: job %q: %w", ErrValueCannotTravel, b.job, err))
			refused, bad = x, true
			var zero T
			return zero // gob would drop parts of x, or never end on its cycle
		}
		return x
	}, &v)
	if bad {
		return refused
	}
	return v
}

// freeze fills *into with the value frozen under key: on the driver it
// calls make and records its encoding; on executors it decodes the
// driver's. A failure is a broken job: it panics with the key.
func (b *Builder) freeze(key string, make func() any, into any) {
	if enc, ok := b.values[key]; ok {
		if err := gob.NewDecoder(bytes.NewReader(enc)).Decode(into); err != nil {
			panic(fmt.Sprintf("dataset: job %q: decode frozen value %q: %v", b.job, key, err))
		}
		return
	}
	if !b.Driver() {
		panic(fmt.Sprintf("dataset: job %q: value %q was not frozen on the driver: the body takes a different path on executors (is it deterministic?)", b.job, key))
	}
	v := make()
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(v); err != nil {
		panic(fmt.Sprintf("dataset: job %q: frozen value %q is not gob-encodable: %v", b.job, key, err))
	}
	b.values[key] = buf.Bytes()
	b.valueSeq = append(b.valueSeq, key)
	if err := gob.NewDecoder(bytes.NewReader(buf.Bytes())).Decode(into); err != nil {
		panic(fmt.Sprintf("dataset: job %q: decode frozen value %q: %v", b.job, key, err))
	}
}

// nodeInfo is what every dataset node has, whatever its element type.
type nodeInfo struct {
	b             *Builder
	id            dagscheduler.NodeID
	op, site, typ string
	// api is the operation the user called that built the node (as
	// apiCallSite): with site, its name in stage names and the DAG
	api         string
	parts       int
	deps        []dagscheduler.Dep
	parents     []node
	preferred   [][]scheduler.Location
	storage     StorageLevel // how the node's partitions are cached; 0: not at all
	unpersisted bool         // persisted, then Unpersist: processes drop what they kept of it
	order       order        // what recomputing a partition may change
	// partitioning is how the records are placed by key, when known
	// (partitioning.go)
	partitioning *partitioning
	// data is a digest of what the body handed a source to decide its
	// records (datadigest.go), part of the fingerprint
	data string
	// checkpoint is set by Checkpoint (checkpoint.go)
	checkpoint *checkpointState
}

func (n *nodeInfo) info() *nodeInfo { return n }

// name is the node's name for stages and the DAG: "countByKey at
// dir/main.go:114", as Spark names an RDD by its short call site.
func (n *nodeInfo) name() string {
	if n.api == "" || n.api == "action" {
		return n.op + " at " + n.site
	}
	return n.api + " at " + n.site
}

// node is a dataset of some element type.
type node interface{ info() *nodeInfo }

// callSite is the first caller outside this package's non-test files, as
// "dir/file.go:line": with the operator and a per-site counter it names a
// node the same way in every process running the same binary.
func callSite() string {
	pcs := make([]uintptr, 32)
	n := runtime.Callers(2, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if !inPackage(f.File) {
			return filepath.Base(filepath.Dir(f.File)) + "/" + filepath.Base(f.File) + fmt.Sprintf(":%d", f.Line)
		}
		if !more {
			return "unknown"
		}
	}
}

// actionName is the action a user called and where, as Spark names a
// job: "countByKey at dir/main.go:114". The action is the exported
// function of this package the first caller outside it called (an action
// built on another, as CountByKey on Collect, is named for itself).
func actionName() string {
	api, site := apiCallSite()
	return api + " at " + site
}

// apiCallSite is the function of this package the first caller outside it
// called, as apiName, and that caller's site (callSite): Spark's short
// call site, which names an RDD an operation builds inside another (the
// map inside CountByKey) for the operation the user called.
func apiCallSite() (api, site string) {
	pcs := make([]uintptr, 32)
	n := runtime.Callers(3, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	fn := ""
	for {
		f, more := frames.Next()
		if !inPackage(f.File) {
			return apiName(fn), filepath.Base(filepath.Dir(f.File)) + "/" + filepath.Base(f.File) + fmt.Sprintf(":%d", f.Line)
		}
		fn = f.Function
		if !more {
			return apiName(fn), "unknown"
		}
	}
}

// apiName is the lower-camel name of function fn ("…/dataset.CountByKey[…]"
// is "countByKey"; a method's is its own; closures are their function's).
func apiName(fn string) string {
	fn = fn[strings.LastIndex(fn, "/")+1:]
	fn = strings.ReplaceAll(fn, "[...]", "")
	parts := strings.Split(fn, ".")[1:] // drop the package
	for len(parts) > 1 && (strings.HasPrefix(parts[len(parts)-1], "func") || strings.HasPrefix(parts[len(parts)-1], "gowrap")) {
		parts = parts[:len(parts)-1]
	}
	if len(parts) == 0 || parts[len(parts)-1] == "" {
		return "action"
	}
	name := parts[len(parts)-1]
	return strings.ToLower(name[:1]) + name[1:]
}

var packageDir = func() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}()

// formatsDir holds the file formats (framework/formats/...), whose sources and sinks are
// named after their caller, as this package's are.
var formatsDir = filepath.Join(filepath.Dir(packageDir), "formats") + string(filepath.Separator)

func inPackage(file string) bool {
	if strings.HasSuffix(file, "_test.go") {
		return false
	}
	return filepath.Dir(file) == packageDir || strings.HasPrefix(file, formatsDir)
}

// newInfo names a new node of op with element type typ.
func (b *Builder) newInfo(op, typ string, parts int, parents []node, deps []dagscheduler.Dep) nodeInfo {
	api, site := apiCallSite()
	k := op + "@" + site
	b.sites[k]++
	for _, p := range parents {
		if p.info().b != b {
			panic(fmt.Sprintf("dataset: %s at %s combines datasets of different jobs or runs", op, site))
		}
	}
	shuffle := slices.ContainsFunc(deps, func(d dagscheduler.Dep) bool { return d.Kind == dagscheduler.Shuffle })
	return nodeInfo{b: b, id: dagscheduler.NodeID(fmt.Sprintf("%s#%d", k, b.sites[k])), op: op, api: api, site: site, typ: typ,
		parts: parts, parents: parents, deps: deps, order: inherit(parents, shuffle)}
}

func (b *Builder) add(n node) {
	b.nodes = append(b.nodes, n)
}

// describe is a node's line of the graph fingerprint: id, element type,
// partitions and edges.
func describe(n *nodeInfo) string {
	var s strings.Builder
	fmt.Fprintf(&s, "%s %s p=%d", n.id, n.typ, n.parts)
	for _, d := range n.deps {
		fmt.Fprintf(&s, " %v(%s", d.Kind, d.Parent)
		switch d.Kind {
		case dagscheduler.Range:
			fmt.Fprintf(&s, " +%d", d.Offset)
		case dagscheduler.Groups:
			fmt.Fprintf(&s, " %v", d.Groups)
		case dagscheduler.Shuffle:
			fmt.Fprintf(&s, " s%d", d.ShuffleID)
		}
		s.WriteString(")")
	}
	if n.storage != 0 {
		fmt.Fprintf(&s, " %v", n.storage)
	}
	if n.data != "" {
		fmt.Fprintf(&s, " data=%s", n.data)
	}
	if n.checkpoint != nil && n.checkpoint.done {
		s.WriteString(" checkpointed")
	}
	return s.String()
}

// fingerprint describes the graph: one line per node, in creation order.
func fingerprint(nodes []node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = describe(n.info())
	}
	return out
}

// ErrGraphMismatch: an executor rebuilt a different graph than the
// driver's (the job body is not deterministic, or the binaries differ).
var ErrGraphMismatch = errors.New("dataset: graph mismatch")

// compareFingerprints names the first node where the executor's graph
// differs from the driver's.
func compareFingerprints(job string, driver, exec []string) error {
	for i := 0; i < max(len(driver), len(exec)); i++ {
		var d, e = "(none)", "(none)"
		if i < len(driver) {
			d = driver[i]
		}
		if i < len(exec) {
			e = exec[i]
		}
		if d != e {
			return fmt.Errorf("%w in job %q at node %d: the driver built %s, this executor built %s; a job body must build the same graph in every process (freeze values read from outside with dataset.Value)",
				ErrGraphMismatch, job, i, d, e)
		}
	}
	return nil
}

// jobSpec is the DAG core's view of the graph for an action over final.
// Node ids are the run's (prefix, see runNode): the Context's DAG core
// keeps cached partitions' locations by node, and another run of the
// same job names its nodes the same.
func (b *Builder) jobSpec(final node, parts []int, prefix dagscheduler.NodeID) dagscheduler.JobSpec {
	spec := dagscheduler.JobSpec{Name: b.job, Final: prefix + final.info().id, Partitions: parts}
	seen := map[node]bool{}
	var walk func(n node)
	walk = func(n node) {
		if seen[n] {
			return
		}
		seen[n] = true
		in := n.info()
		if in.checkpoint != nil && in.checkpoint.done {
			// a written checkpoint is a source: its files, no lineage
			spec.Nodes = append(spec.Nodes, dagscheduler.Node{ID: prefix + in.id, Name: in.name(),
				Partitions: in.parts, Cached: in.storage != 0})
			return
		}
		for _, p := range in.parents {
			walk(p)
		}
		deps := make([]dagscheduler.Dep, len(in.deps))
		for i, d := range in.deps {
			d.Parent = prefix + d.Parent
			deps[i] = d
		}
		spec.Nodes = append(spec.Nodes, dagscheduler.Node{ID: prefix + in.id, Name: in.name(), Partitions: in.parts,
			Deps: deps, Preferred: in.preferred, Cached: in.storage != 0, Indeterminate: in.order == indeterminate})
	}
	walk(final)
	return spec
}

func (b *Builder) nodeByID(id dagscheduler.NodeID) node {
	for _, n := range b.nodes {
		if n.info().id == id {
			return n
		}
	}
	return nil
}

// fail records an error found while building the graph on the driver; the
// next action returns it without running anything.
func (b *Builder) fail(err error) {
	if b.buildErr == nil {
		b.buildErr = err
	}
}
