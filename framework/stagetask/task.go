package stagetask

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/flint-mesos/flint/framework/mapoutput"
)

// Kind says what a task does with its pipeline's output.
type Kind uint8

// Kinds.
const (
	Map    Kind = iota // write the output as shuffle ShuffleID
	Result             // return it to the driver
)

// Task is one task of a stage as the executor runs it.
type Task struct {
	Kind         Kind
	Job          string // the registered job (dataset layer) the graph is rebuilt from
	Args         []byte // the job's encoded arguments
	Node         string // the last node of the stage's pipeline
	Partition    int
	JobID        int64
	StageID      int
	StageAttempt int
	Attempt      uint64 // the driver's id of this attempt
	Epoch        int64
	ShuffleID    int // Map: the shuffle written
	NumReduces   int // Map: its reduce partitions
	Reads        []Read
	// Executor is where the task runs, as its map output's location.
	Executor mapoutput.Location
}

// Read is what the task reads of one reduce partition of one shuffle:
// its blocks by location, or, when an output had no location at launch,
// the failure Shuffle.Open reports. A task has one Read per reduce
// partition its pipeline reads: partition Task.Partition of each shuffle
// at its stage's boundary, or several when narrow dependencies (a
// coalesce) above the shuffle gather partitions.
type Read struct {
	ShuffleID int
	Reduce    int
	Groups    []mapoutput.FetchGroup
	Missing   *mapoutput.FetchFailure
}

// ReadOf is the Read of reduce partition reduce of shuffle shuffleID, if
// the task has one.
func (t *Task) ReadOf(shuffleID, reduce int) (Read, bool) {
	for _, r := range t.Reads {
		if r.ShuffleID == shuffleID && r.Reduce == reduce {
			return r, true
		}
	}
	return Read{}, false
}

// Output is what a task hands back, encoded as its task output.
type Output struct {
	Sizes []uint64 // Map: each reduce partition's block size, from the writer
	// Value is a result task's value; a map task's, when set, goes to
	// StageJob.OnMapOutput on the driver (accumulator updates).
	Value        []byte
	FetchFailure *mapoutput.FetchFailure // the task could not read a shuffle block
	// Location is where a map task's output is read from: its executor's
	// shuffle (filled in by the task function when the runner leaves it
	// empty).
	Location mapoutput.Location
	// Cached lists partitions of cached nodes this executor now holds:
	// the driver's DAG core prefers it for them, and forgets them when
	// the executor is lost.
	Cached []CachedPartition
}

// CachedPartition is partition Partition of node Node.
type CachedPartition struct {
	Node      string
	Partition int
}

// Runner runs the pipeline of a task of a registered job (the dataset
// layer implements it). A fetch failure is returned as an error wrapping a
// *mapoutput.FetchFailure (errors.As finds it).
type Runner interface {
	RunTask(ctx context.Context, t *Task, sh Shuffle) (Output, error)
}

// RunnerFunc adapts a function to Runner.
type RunnerFunc func(ctx context.Context, t *Task, sh Shuffle) (Output, error)

// RunTask calls f.
func (f RunnerFunc) RunTask(ctx context.Context, t *Task, sh Shuffle) (Output, error) {
	return f(ctx, t, sh)
}

// Run runs t with r and folds a fetch failure into the Output, so that it
// travels as the task's output and not as an opaque error. A Read with
// Missing set fails only if the pipeline opens it (a cached partition may
// not need its shuffle).
func Run(ctx context.Context, r Runner, t *Task, sh Shuffle) (Output, error) {
	out, err := r.RunTask(ctx, t, sh)
	var ff *mapoutput.FetchFailure
	if errors.As(err, &ff) {
		return Output{FetchFailure: ff}, nil
	}
	return out, err
}

// ErrBadEncoding is returned for bytes that do not decode.
var ErrBadEncoding = errors.New("stagetask: bad encoding")

const version = 3

// MarshalBinary encodes the task.
func (t *Task) MarshalBinary() ([]byte, error) {
	var e enc
	e.b = append(e.b, version, byte(t.Kind))
	e.str(t.Job)
	e.bytes(t.Args)
	e.str(t.Node)
	for _, v := range []int64{int64(t.Partition), t.JobID, int64(t.StageID), int64(t.StageAttempt), t.Epoch, int64(t.ShuffleID), int64(t.NumReduces)} {
		e.varint(v)
	}
	e.uvarint(t.Attempt)
	e.location(t.Executor)
	e.uvarint(uint64(len(t.Reads)))
	for _, r := range t.Reads {
		e.varint(int64(r.ShuffleID))
		e.varint(int64(r.Reduce))
		e.failure(r.Missing)
		e.uvarint(uint64(len(r.Groups)))
		for _, g := range r.Groups {
			e.location(g.Location)
			e.uvarint(uint64(len(g.Blocks)))
			for _, b := range g.Blocks {
				e.varint(int64(b.MapIndex))
				e.varint(int64(b.ReduceIndex))
				e.uvarint(b.Size)
			}
		}
	}
	return e.b, nil
}

// UnmarshalBinary decodes MarshalBinary's output; bad input is an
// ErrBadEncoding and leaves t unchanged.
func (t *Task) UnmarshalBinary(data []byte) error {
	d := dec{b: data}
	if v := d.byte(); v != version && d.err == nil {
		return fmt.Errorf("%w: task version %d, want %d", ErrBadEncoding, v, version)
	}
	var out Task
	out.Kind = Kind(d.byte())
	out.Job, out.Args, out.Node = d.str(), d.bytes(), d.str()
	out.Partition, out.JobID = d.int(), d.varint()
	out.StageID, out.StageAttempt = d.int(), d.int()
	out.Epoch = d.varint()
	out.ShuffleID, out.NumReduces = d.int(), d.int()
	out.Attempt = d.uvarint()
	out.Executor = d.location()
	n := d.count()
	for range n {
		if d.err != nil {
			break
		}
		r := Read{ShuffleID: d.int(), Reduce: d.int(), Missing: d.failure()}
		groups := d.count()
		for range groups {
			if d.err != nil {
				break
			}
			g := mapoutput.FetchGroup{Location: d.location()}
			blocks := d.count()
			for range blocks {
				if d.err != nil {
					break
				}
				b := mapoutput.Block{MapIndex: d.int(), ReduceIndex: d.int(), Size: d.uvarint()}
				g.Blocks = append(g.Blocks, b)
				g.Bytes += b.Size
			}
			r.Groups = append(r.Groups, g)
		}
		out.Reads = append(out.Reads, r)
	}
	if out.Kind > Result {
		d.fail("kind %d", out.Kind)
	}
	if err := d.done(); err != nil {
		return err
	}
	*t = out
	return nil
}

// MarshalBinary encodes the output.
func (o *Output) MarshalBinary() ([]byte, error) {
	var e enc
	e.b = append(e.b, version)
	e.failure(o.FetchFailure)
	e.uvarint(uint64(len(o.Sizes)))
	for _, s := range o.Sizes {
		e.uvarint(s)
	}
	e.bytes(o.Value)
	e.location(o.Location)
	e.uvarint(uint64(len(o.Cached)))
	for _, c := range o.Cached {
		e.str(c.Node)
		e.varint(int64(c.Partition))
	}
	return e.b, nil
}

// UnmarshalBinary decodes MarshalBinary's output.
func (o *Output) UnmarshalBinary(data []byte) error {
	d := dec{b: data}
	if v := d.byte(); v != version && d.err == nil {
		return fmt.Errorf("%w: output version %d, want %d", ErrBadEncoding, v, version)
	}
	var out Output
	out.FetchFailure = d.failure()
	n := d.count()
	for range n {
		if d.err != nil {
			break
		}
		out.Sizes = append(out.Sizes, d.uvarint())
	}
	out.Value = d.bytes()
	out.Location = d.location()
	n = d.count()
	for range n {
		if d.err != nil {
			break
		}
		out.Cached = append(out.Cached, CachedPartition{Node: d.str(), Partition: d.int()})
	}
	if err := d.done(); err != nil {
		return err
	}
	*o = out
	return nil
}

type enc struct{ b []byte }

func (e *enc) uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *enc) varint(v int64)   { e.b = binary.AppendVarint(e.b, v) }
func (e *enc) bytes(v []byte) {
	e.uvarint(uint64(len(v)))
	e.b = append(e.b, v...)
}
func (e *enc) str(s string) { e.bytes([]byte(s)) }
func (e *enc) location(l mapoutput.Location) {
	e.str(l.ExecutorID)
	e.str(l.Host)
	e.str(l.Address)
}
func (e *enc) failure(f *mapoutput.FetchFailure) {
	if f == nil {
		e.b = append(e.b, 0)
		return
	}
	e.b = append(e.b, 1)
	e.varint(int64(f.ShuffleID))
	e.varint(int64(f.MapIndex))
	e.varint(int64(f.ReduceIndex))
	e.location(f.Location())
	e.str(f.Message)
}

type dec struct {
	b   []byte
	err error
}

func (d *dec) fail(format string, a ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", ErrBadEncoding, fmt.Sprintf(format, a...))
	}
}

func (d *dec) done() error {
	if d.err == nil && len(d.b) > 0 {
		d.fail("%d trailing bytes", len(d.b))
	}
	return d.err
}

func (d *dec) byte() byte {
	if d.err != nil || len(d.b) == 0 {
		d.fail("truncated")
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *dec) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) int() int {
	v := d.varint()
	if v != int64(int(v)) || v < -1<<31 || v > 1<<31-1 {
		d.fail("integer %d out of range", v)
		return 0
	}
	return int(v)
}

// count reads a length; every counted element takes at least one byte.
func (d *dec) count() int {
	v := d.uvarint()
	if d.err == nil && v > uint64(len(d.b)) {
		d.fail("count %d over the %d bytes left", v, len(d.b))
	}
	if d.err != nil {
		return 0
	}
	return int(v)
}

func (d *dec) bytes() []byte {
	n := d.count()
	if d.err != nil {
		return nil
	}
	v := append([]byte(nil), d.b[:n]...)
	d.b = d.b[n:]
	return v
}

func (d *dec) str() string { return string(d.bytes()) }

func (d *dec) location() mapoutput.Location {
	return mapoutput.Location{ExecutorID: d.str(), Host: d.str(), Address: d.str()}
}

func (d *dec) failure() *mapoutput.FetchFailure {
	switch d.byte() {
	case 0:
		return nil
	case 1:
	default:
		d.fail("bad fetch failure flag")
		return nil
	}
	f := &mapoutput.FetchFailure{ShuffleID: d.int(), MapIndex: d.int(), ReduceIndex: d.int()}
	l := d.location()
	f.ExecutorID, f.Host, f.Address = l.ExecutorID, l.Host, l.Address
	f.Message = d.str()
	return f
}
