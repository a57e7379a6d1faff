package stagetask

import (
	"context"
	"errors"
	"fmt"

	"github.com/flint-mesos/flint/framework/mapoutput"
	"github.com/flint-mesos/flint/internal/varenc"
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
	// AttemptNumber counts the earlier attempts of this task (0 for the
	// first; Spark's TaskContext.attemptNumber).
	AttemptNumber int
	Epoch         int64
	ShuffleID     int // Map: the shuffle written
	NumReduces    int // Map: its reduce partitions
	Reads         []Read
	// Statuses name, for each shuffle the task reads, where its executor
	// finds the shuffle's map statuses (one per shuffle of Reads).
	Statuses []StatusRef
	// Executor is where the task runs, as its map output's location.
	Executor mapoutput.Location
}

// Read is what the task reads of one reduce partition of one shuffle. A
// task has one Read per reduce partition its pipeline reads: partition
// Task.Partition of each shuffle at its stage's boundary, or several when
// narrow dependencies (a coalesce) above the shuffle gather partitions.
// The driver sends the shuffle and partition only; the executor fills in
// the blocks by location from the shuffle's map statuses
// (MapStatuses.Resolve, before the runner runs), or, when an output has no
// location there, the failure Shuffle.Open reports. Neither travels.
type Read struct {
	ShuffleID int
	Reduce    int
	Groups    []mapoutput.FetchGroup
	Missing   *mapoutput.FetchFailure
}

// StatusRef returns the task's StatusRef of shuffle shuffleID, if any.
func (t *Task) StatusRef(shuffleID int) (StatusRef, bool) {
	for _, s := range t.Statuses {
		if s.ShuffleID == shuffleID {
			return s, true
		}
	}
	return StatusRef{}, false
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

const version = 5

// MarshalBinary encodes the task.
func (t *Task) MarshalBinary() ([]byte, error) {
	var e enc
	e.B = append(e.B, version, byte(t.Kind))
	e.Str(t.Job)
	e.Bytes(t.Args)
	e.Str(t.Node)
	for _, v := range []int64{int64(t.Partition), t.JobID, int64(t.StageID), int64(t.StageAttempt), t.Epoch, int64(t.ShuffleID), int64(t.NumReduces), int64(t.AttemptNumber)} {
		e.Varint(v)
	}
	e.Uvarint(t.Attempt)
	e.location(t.Executor)
	e.Uvarint(uint64(len(t.Reads)))
	for _, r := range t.Reads {
		e.Varint(int64(r.ShuffleID))
		e.Varint(int64(r.Reduce))
	}
	e.Uvarint(uint64(len(t.Statuses)))
	for _, s := range t.Statuses {
		e.Varint(int64(s.ShuffleID))
		e.Varint(s.Epoch)
		e.Str(s.File)
	}
	return e.B, nil
}

// UnmarshalBinary decodes MarshalBinary's output; bad input is an
// ErrBadEncoding and leaves t unchanged.
func (t *Task) UnmarshalBinary(data []byte) error {
	d := dec{varenc.NewDecoder(data, ErrBadEncoding)}
	if v := d.Byte(); v != version && d.Err() == nil {
		return fmt.Errorf("%w: task version %d, want %d", ErrBadEncoding, v, version)
	}
	var out Task
	out.Kind = Kind(d.Byte())
	out.Job, out.Args, out.Node = d.Str(), d.Bytes(), d.Str()
	out.Partition, out.JobID = d.Int32(), d.Varint()
	out.StageID, out.StageAttempt = d.Int32(), d.Int32()
	out.Epoch = d.Varint()
	out.ShuffleID, out.NumReduces = d.Int32(), d.Int32()
	out.AttemptNumber = d.Int32()
	out.Attempt = d.Uvarint()
	out.Executor = d.location()
	n := d.Length()
	for range n {
		if d.Err() != nil {
			break
		}
		out.Reads = append(out.Reads, Read{ShuffleID: d.Int32(), Reduce: d.Int32()})
	}
	n = d.Length()
	for range n {
		if d.Err() != nil {
			break
		}
		out.Statuses = append(out.Statuses, StatusRef{ShuffleID: d.Int32(), Epoch: d.Varint(), File: d.Str()})
	}
	if out.Kind > Result {
		d.Fail("kind %d", out.Kind)
	}
	if err := d.Done(); err != nil {
		return err
	}
	*t = out
	return nil
}

// MarshalBinary encodes the output.
func (o *Output) MarshalBinary() ([]byte, error) {
	var e enc
	e.B = append(e.B, version)
	e.failure(o.FetchFailure)
	e.Uvarint(uint64(len(o.Sizes)))
	for _, s := range o.Sizes {
		e.Uvarint(s)
	}
	e.Bytes(o.Value)
	e.location(o.Location)
	e.Uvarint(uint64(len(o.Cached)))
	for _, c := range o.Cached {
		e.Str(c.Node)
		e.Varint(int64(c.Partition))
	}
	return e.B, nil
}

// UnmarshalBinary decodes MarshalBinary's output.
func (o *Output) UnmarshalBinary(data []byte) error {
	d := dec{varenc.NewDecoder(data, ErrBadEncoding)}
	if v := d.Byte(); v != version && d.Err() == nil {
		return fmt.Errorf("%w: output version %d, want %d", ErrBadEncoding, v, version)
	}
	var out Output
	out.FetchFailure = d.failure()
	n := d.Length()
	for range n {
		if d.Err() != nil {
			break
		}
		out.Sizes = append(out.Sizes, d.Uvarint())
	}
	out.Value = d.Bytes()
	out.Location = d.location()
	n = d.Length()
	for range n {
		if d.Err() != nil {
			break
		}
		out.Cached = append(out.Cached, CachedPartition{Node: d.Str(), Partition: d.Int32()})
	}
	if err := d.Done(); err != nil {
		return err
	}
	*o = out
	return nil
}

type enc struct{ varenc.Encoder }

func (e *enc) location(l mapoutput.Location) {
	e.Str(l.ExecutorID)
	e.Str(l.Host)
	e.Str(l.Address)
}
func (e *enc) failure(f *mapoutput.FetchFailure) {
	if f == nil {
		e.B = append(e.B, 0)
		return
	}
	e.B = append(e.B, 1)
	e.Varint(int64(f.ShuffleID))
	e.Varint(int64(f.MapIndex))
	e.Varint(int64(f.ReduceIndex))
	e.location(f.Location())
	e.Str(f.Message)
}

type dec struct{ *varenc.Decoder }

func (d *dec) location() mapoutput.Location {
	return mapoutput.Location{ExecutorID: d.Str(), Host: d.Str(), Address: d.Str()}
}

func (d *dec) failure() *mapoutput.FetchFailure {
	switch d.Byte() {
	case 0:
		return nil
	case 1:
	default:
		d.Fail("bad fetch failure flag")
		return nil
	}
	f := &mapoutput.FetchFailure{ShuffleID: d.Int32(), MapIndex: d.Int32(), ReduceIndex: d.Int32()}
	l := d.location()
	f.ExecutorID, f.Host, f.Address = l.ExecutorID, l.Host, l.Address
	f.Message = d.Str()
	return f
}
