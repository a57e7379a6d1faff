package executor

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework/mapoutput"
	"github.com/flint-mesos/flint/framework/task"
	"github.com/flint-mesos/flint/proto/flintconv"
	"github.com/flint-mesos/flint/proto/flintpb"
)

// outcome is what executing a task produced, before kill and size checks.
type outcome struct {
	returned bool // execute returned (false: the function called runtime.Goexit)
	output   []byte
	failure  *flintpb.TaskFailure
	metrics  flintpb.TaskMetrics
}

// run runs one task on its worker goroutine: RUNNING, execute, then
// exactly one terminal update, even if the function calls runtime.Goexit
// (which then ends the worker).
func (r *Runtime) run(t *runningTask) {
	start := r.cfg.Now().UnixNano()
	o := outcome{metrics: flintpb.TaskMetrics{
		LaunchTimeUnixNano: t.launched,
		StartTimeUnixNano:  start,
		InputSize:          int64(len(t.td.Input)), // the function's input, unless it reports what it read
		InputRecords:       1,
	}}
	running := new(runningUpdate)
	r.header(&running.u, &running.uuid, t, flintpb.TaskState_TASK_RUNNING, start)
	running.m = flintpb.TaskMetrics{LaunchTimeUnixNano: t.launched, StartTimeUnixNano: start}
	running.u.Metrics = &running.m
	r.report(&running.u)
	defer r.finish(t, &o)
	r.execute(t, &o)
	o.returned = true
}

// runningUpdate and terminalUpdate hold an update and the messages it
// points to in one allocation.
type runningUpdate struct {
	u    flintpb.StatusUpdate
	m    flintpb.TaskMetrics
	uuid [16]byte
}

type terminalUpdate struct {
	u      flintpb.StatusUpdate
	m      flintpb.TaskMetrics
	uuid   [16]byte
	res    flintpb.TaskResult
	inline flintpb.TaskResult_Inline
}

// execute looks the function up and invokes it, filling o.
func (r *Runtime) execute(t *runningTask, o *outcome) {
	td := t.td
	entry, err := r.cfg.Registry.Lookup(td.Function)
	if err != nil {
		o.failure = failure(flintpb.FailureKind_UNKNOWN_FUNCTION, fmt.Sprintf("task %d: %v", td.TaskId, err))
		return
	}
	if td.Codec != "" && td.Codec != entry.Codec().Name() {
		o.failure = failure(flintpb.FailureKind_DECODE_ERROR, fmt.Sprintf(
			"task %d: input encoded with codec %q but function %q uses %q",
			td.TaskId, td.Codec, td.Function, entry.Codec().Name()))
		return
	}
	ctx := t.ctx
	if len(td.Files) > 0 {
		v, err := r.files.Prepare(ctx, td.Files, td.FilesToken)
		if err != nil {
			if o.failure = diskFullFailure(err); o.failure == nil {
				o.failure = failure(flintpb.FailureKind_EXCEPTION, fmt.Sprintf("task %d: %v", td.TaskId, err))
			}
			return
		}
		ctx = task.WithFiles(ctx, v)
	}
	start := r.cfg.Now()
	var m task.Metrics
	out, tm, p, err := invoke(task.WithMetrics(ctx, &m), entry, td.Input, r.cfg.Now)
	shuffleMetrics(&o.metrics, m.Shuffle())
	if b, n, ok := m.Input(); ok {
		o.metrics.InputSize, o.metrics.InputRecords = b, n
	}
	if p != nil {
		o.metrics.RunTimeNanos = int64(r.cfg.Now().Sub(start))
		o.failure = &flintpb.TaskFailure{
			Kind:    flintpb.FailureKind_PANIC,
			Message: fmt.Sprintf("task %d: function %q panicked: %v", td.TaskId, td.Function, p.value),
			Stack:   string(p.stack),
		}
		r.cfg.Logger.WithFields(logrus.Fields{"task_id": td.TaskId, "function": td.Function}).
			Debugf("task panicked: %v", p.value) // the driver reports the failure, with the stack
		return
	}
	o.metrics.DecodeNanos, o.metrics.RunTimeNanos, o.metrics.EncodeNanos =
		int64(tm.Decode), int64(tm.Run), int64(tm.Encode)
	if err != nil {
		o.failure = taskFailure(err)
		return
	}
	o.output = out
	o.metrics.ResultSize = int64(len(out))
}

// taskFailure is how a task function's error ends its attempt. Only a
// failed task comes here: errors.As's target escapes to the heap, one
// allocation a task that succeeded does not pay.
func taskFailure(err error) *flintpb.TaskFailure {
	var ff *mapoutput.FetchFailure
	switch {
	case errors.As(err, &ff):
		return flintconv.FetchFailedFailure(ff)
	case errors.Is(err, task.ErrDecode), errors.Is(err, task.ErrEncode):
		return failure(flintpb.FailureKind_DECODE_ERROR, err.Error())
	case errors.Is(err, task.ErrNotRetryable):
		return failure(flintpb.FailureKind_NOT_RETRYABLE, err.Error())
	}
	if f := diskFullFailure(err); f != nil {
		return f
	}
	return failure(flintpb.FailureKind_EXCEPTION, err.Error())
}

// shuffleMetrics copies what the task reported of its shuffles into pm.
func shuffleMetrics(pm *flintpb.TaskMetrics, s task.ShuffleMetrics) {
	pm.ShuffleRecordsWritten, pm.ShuffleBytesWritten = s.RecordsWritten, s.BytesWritten
	pm.ShuffleSpills, pm.ShuffleSpillBytes, pm.ShuffleWriteNanos = s.Spills, s.SpillBytes, int64(s.WriteTime)
	pm.ShuffleLocalBlocks, pm.ShuffleRemoteBlocks = s.LocalBlocks, s.RemoteBlocks
	pm.ShuffleLocalBytes, pm.ShuffleRemoteBytes, pm.ShuffleFetchWaitNanos = s.LocalBytes, s.RemoteBytes, int64(s.FetchWait)
}

type panicInfo struct {
	value any
	stack []byte
}

// invoke calls the entry, recovering a panic with its stack.
func invoke(ctx context.Context, e task.Entry, input []byte, now func() time.Time) (out []byte, tm task.Timings, p *panicInfo, err error) {
	defer func() {
		if v := recover(); v != nil {
			p = &panicInfo{value: v, stack: []byte(task.TrimStack(debug.Stack()))}
		}
	}()
	if te, ok := e.(task.TimedEntry); ok {
		out, tm, err = te.InvokeTimed(ctx, input, now)
		return out, tm, nil, err
	}
	start := now()
	out, err = e.Invoke(ctx, input)
	tm.Run = now().Sub(start)
	return out, tm, nil, err
}

// finish builds the terminal update, releases the task's cores and then
// reports the update.
func (r *Runtime) finish(t *runningTask, o *outcome) {
	td := t.td
	now := r.cfg.Now().UnixNano()
	tu := new(terminalUpdate)
	u := &tu.u
	r.header(u, &tu.uuid, t, flintpb.TaskState_TASK_FAILED, now)
	tu.m = o.metrics
	tu.m.FinishTimeUnixNano = now
	u.Metrics = &tu.m
	r.mu.Lock()
	switch {
	case t.killed:
		u.State = flintpb.TaskState_TASK_KILLED
		u.Failure = failure(flintpb.FailureKind_KILLED, t.reason)
	case !o.returned:
		u.Failure = &flintpb.TaskFailure{
			Kind:    flintpb.FailureKind_PANIC,
			Message: fmt.Sprintf("task %d: function %q called runtime.Goexit", td.TaskId, td.Function),
			Stack:   string(debug.Stack()),
		}
	case o.failure != nil:
		u.Failure = o.failure
	default:
		r.resultLocked(tu, o.output)
	}
	delete(r.tasks, td.TaskId)
	r.free += t.cpus
	r.mu.Unlock()
	t.cancel(nil)
	if debugEnabled(r.cfg.Logger) {
		r.cfg.Logger.WithFields(logrus.Fields{"task_id": td.TaskId, "state": u.State}).Debug("task done")
	}
	r.report(u)
}

// debugEnabled reports whether l would log at debug level; building the
// fields of a discarded entry costs four allocations per task.
func debugEnabled(l logrus.FieldLogger) bool {
	switch l := l.(type) {
	case *logrus.Logger:
		return l.IsLevelEnabled(logrus.DebugLevel)
	case *logrus.Entry:
		return l.Logger == nil || l.Logger.IsLevelEnabled(logrus.DebugLevel)
	}
	return true
}

// resultLocked fills u for a task that returned output: too large, kept
// for fetching, or inline.
func (r *Runtime) resultLocked(tu *terminalUpdate, out []byte) {
	u := &tu.u
	size := int64(len(out))
	switch {
	case r.cfg.MaxResultSize > 0 && size > r.cfg.MaxResultSize:
		u.Failure = failure(flintpb.FailureKind_RESULT_TOO_LARGE, fmt.Sprintf(
			"task %d: result of %s exceeds flint.driver.maxResultSize (%s)",
			u.TaskId, formatBytes(size), formatBytes(r.cfg.MaxResultSize)))
	case size > r.cfg.MaxDirectResultSize:
		blockID := fmt.Sprintf("taskresult_%d", u.TaskId)
		sum := sha256.Sum256(out)
		r.results[blockID] = out
		u.State = flintpb.TaskState_TASK_FINISHED
		u.Result = &flintpb.TaskResult{Value: &flintpb.TaskResult_Indirect{Indirect: &flintpb.IndirectResult{
			BlockId: blockID, Size_: size, ExecutorId: r.cfg.ExecutorID, Sha256: hex.EncodeToString(sum[:]),
		}}}
	default:
		u.State = flintpb.TaskState_TASK_FINISHED
		tu.inline.Inline = out
		tu.res.Value = &tu.inline
		u.Result = &tu.res
	}
}

// header fills the fields every update of t carries, with a fresh id
// written to uuid.
func (r *Runtime) header(u *flintpb.StatusUpdate, uuid *[16]byte, t *runningTask, state flintpb.TaskState, now int64) {
	r.ids.put(uuid)
	u.TaskId = t.td.TaskId
	u.Attempt = t.td.Attempt
	u.ExecutorId = r.cfg.ExecutorID
	u.State = state
	u.TimestampUnixNano = now
	u.Uuid = uuid[:]
}

func failure(kind flintpb.FailureKind, msg string) *flintpb.TaskFailure {
	return &flintpb.TaskFailure{Kind: kind, Message: msg}
}

// updateIDs issues the 16-byte ids of a Runtime's status updates (the
// receiver acknowledges and de-duplicates updates by id).
//
// An id is an RFC 9562 version 8 (custom layout) UUID: bytes 0–7 are a
// per-Runtime prefix read once from crypto/rand (60 random bits after the
// version nibble), bytes 8–15 a 62-bit counter (after the variant bits)
// that starts at a random value below 2^61 and is incremented atomically
// per id. Ids of one Runtime are distinct until 2^61 of them were issued;
// ids of two Runtimes can only meet if their random prefixes are equal
// (2^-60) and their counter ranges overlap, so uniqueness is as strong as
// the crypto/rand ids each update used to read, without a getrandom call
// and an allocation per update. The version nibble (8) also keeps them
// apart from the random version 4 UUIDs other components generate.
type updateIDs struct {
	prefix [8]byte
	next   atomic.Uint64
}

func newUpdateIDs() *updateIDs {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails since Go 1.24
	g := &updateIDs{}
	copy(g.prefix[:], b[:8])
	g.prefix[6] = g.prefix[6]&0x0f | 0x80 // version 8
	g.next.Store(binary.BigEndian.Uint64(b[8:]) >> 3)
	return g
}

// put writes the next id to b.
func (g *updateIDs) put(b *[16]byte) {
	copy(b[:8], g.prefix[:])
	binary.BigEndian.PutUint64(b[8:], g.next.Add(1))
	b[8] = b[8]&0x3f | 0x80 // RFC 9562 variant
}

// formatBytes renders n as "512 B", "3.0 MiB", ...
func formatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
