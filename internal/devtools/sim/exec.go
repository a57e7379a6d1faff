package sim

import (
	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"bytes"
	"context"
	"fmt"

	"github.com/flint-mesos/flint/framework/codec"
	"github.com/flint-mesos/flint/framework/mapoutput"
	"github.com/flint-mesos/flint/framework/stagetask"
	"github.com/flint-mesos/flint/proto/flintconv"
	"github.com/flint-mesos/flint/proto/flintpb"
)

// The simulated task bodies. A map task of shuffle s, partition m writes
// block (m, r) of every reduce partition r, of mapValue(s, m, r) records
// (never 0, so every block is listed); its output stays on its executor
// until the executor ends or the shuffle is released. A result task of
// partition r reads the blocks its executor cuts from the driver's map
// statuses (loaded once per epoch into the executor's
// stagetask.MapStatuses, as a real executor's), from the executors they
// name: a block whose executor is gone or no longer holds it is a
// fetch failure naming it, as a real reducer's; otherwise its value counts
// the blocks read and sums their records. expectedReduce is that value
// when every map output was read once: a result built from a stale or
// incomplete snapshot differs.

type outputKey struct{ shuffle, mapIndex int }

// mapValue mixes the block's coordinates (splitmix64's finaliser): a
// scale run computes it maps × reducers times on each side (10^9 at
// 100,000 × 10,000), so it allocates nothing.
func mapValue(shuffle, m, r int) uint64 {
	z := uint64(shuffle)*0x9e3779b97f4a7c15 ^ uint64(m)*0xbf58476d1ce4e5b9 ^ uint64(r)*0x94d049bb133111eb
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	z ^= z >> 31
	return 1 + z%1000
}

func reduceValue(r, blocks int, sum uint64) []byte {
	return []byte(fmt.Sprintf("r%d:%d blocks:%d records", r, blocks, sum))
}

// attemptTag ends a task's value: the attempt that computed it (the
// driver's task id), its job's shuffle and its partition. A map task's value is its tag
// alone — its accumulator update, which the driver hands the job's
// OnMapOutput once per successful map task; a result task's value is also
// its accumulator update, applied once per partition from the result the
// driver accepted.
func attemptTag(shuffle, partition int, tid uint64) []byte {
	return []byte(fmt.Sprintf(" @s%d p%d t%d", shuffle, partition, tid))
}

// parseTag splits a task's value into what it computed and its tag.
func parseTag(v []byte) (body []byte, t tag, ok bool) {
	i := bytes.LastIndex(v, []byte(" @s"))
	if i < 0 {
		return v, t, false
	}
	if _, err := fmt.Sscanf(string(v[i:]), " @s%d p%d t%d", &t.shuffle, &t.partition, &t.tid); err != nil {
		return v, t, false
	}
	return v[:i], t, true
}

// tag is what attemptTag wrote.
type tag struct {
	shuffle, partition int
	tid                uint64
}

// readShuffle is the shuffle a result task reads (its job's one).
func readShuffle(st *stagetask.Task) int {
	if len(st.Reads) == 0 {
		return -1
	}
	return st.Reads[0].ShuffleID
}

func expectedReduce(shuffle, maps, r int) []byte {
	var sum uint64
	for m := range maps {
		sum += mapValue(shuffle, m, r)
	}
	return reduceValue(r, maps, sum)
}

// decodeTask reads the stage task a TaskInfo's description carries.
func decodeTask(data []byte) (*flintpb.TaskDescription, *stagetask.Task, error) {
	var td flintpb.TaskDescription
	if err := td.Unmarshal(data); err != nil {
		return nil, nil, fmt.Errorf("description: %w", err)
	}
	st, err := stageOf(&td)
	return &td, st, err
}

// stageOf reads the stage task a task description's input carries.
func stageOf(td *flintpb.TaskDescription) (*stagetask.Task, error) {
	var raw []byte
	if err := codec.Gob.Unmarshal(td.Input, &raw); err != nil {
		return nil, fmt.Errorf("input: %w", err)
	}
	var st stagetask.Task
	if err := st.UnmarshalBinary(raw); err != nil {
		return nil, fmt.Errorf("stage task: %w", err)
	}
	return &st, nil
}

// release drops the executor's outputs of a released shuffle (all: of
// every shuffle) and their map statuses, as a real executor's
// stagetask.Env.ReleaseShuffle.
func (e *executor) release(shuffle int, all bool) {
	for k := range e.outputs {
		if all || k.shuffle == shuffle {
			delete(e.outputs, k)
		}
	}
	if e.statuses == nil {
		return
	}
	if all {
		e.statuses.ForgetAll()
	} else {
		e.statuses.Forget(shuffle)
	}
}

// mapStatuses is the executor's cache of map statuses, made when its
// first reducer runs.
func (m *master) mapStatuses(e *executor) *stagetask.MapStatuses {
	if e.statuses == nil {
		e.statuses = stagetask.NewMapStatuses(m.statusSource(e))
	}
	return e.statuses
}

// execute is a task's body run on its executor e when its time is up: the
// output the driver's DAG core reads.
func (m *master) execute(st *stagetask.Task, e *executor, tid uint64, name string) stagetask.Output {
	if st.Kind == stagetask.Map {
		sizes := make([]uint64, st.NumReduces)
		for r := range sizes {
			sizes[r] = 100 * mapValue(st.ShuffleID, st.Partition, r)
		}
		e.outputs[outputKey{st.ShuffleID, st.Partition}] = true
		return stagetask.Output{Sizes: sizes, Location: mapoutput.Location{Host: e.agent.host, Address: e.id},
			Value: attemptTag(st.ShuffleID, st.Partition, tid)}
	}
	out := m.reduce(st, e, tid, name)
	if ff := out.FetchFailure; ff != nil && e.statuses != nil {
		// as stagetask's task function: the next reducer reloads them
		e.statuses.Forget(ff.ShuffleID)
	}
	return out
}

// reduce is a result task's body: its blocks cut from the executor's map
// statuses, read from the executors they name.
func (m *master) reduce(st *stagetask.Task, e *executor, tid uint64, name string) stagetask.Output {
	m.mapStatuses(e).Resolve(context.Background(), st)
	var blocks int
	var sum uint64
	inject := m.s.cfg.Faults.FetchFail > 0 && m.s.rng.Float64() < m.s.cfg.Faults.FetchFail
	for _, rd := range st.Reads {
		if rd.Missing != nil {
			ff := *rd.Missing
			return stagetask.Output{FetchFailure: &ff}
		}
		for _, g := range rd.Groups {
			e := m.execIdx[g.Location.ExecutorID]
			for _, b := range g.Blocks {
				ff := &mapoutput.FetchFailure{ShuffleID: rd.ShuffleID, MapIndex: b.MapIndex, ReduceIndex: b.ReduceIndex,
					ExecutorID: g.Location.ExecutorID, Host: g.Location.Host, Address: g.Location.Address}
				switch {
				case e == nil || !e.outputs[outputKey{rd.ShuffleID, b.MapIndex}]:
					ff.Message = "sim: the executor does not hold this output"
					m.s.logf("%s: fetch of shuffle %d map %d from %s failed", name, rd.ShuffleID, b.MapIndex, g.Location.ExecutorID)
					return stagetask.Output{FetchFailure: ff}
				case inject:
					ff.Message = "sim: injected fetch failure"
					m.s.logf("FAULT %s: fetch of shuffle %d map %d from %s fails", name, rd.ShuffleID, b.MapIndex, g.Location.ExecutorID)
					return stagetask.Output{FetchFailure: ff}
				}
				if m.s.cfg.skipBlock && st.Partition == 0 && b.MapIndex == 0 {
					continue
				}
				blocks++
				sum += mapValue(rd.ShuffleID, b.MapIndex, b.ReduceIndex)
			}
		}
	}
	return stagetask.Output{Value: append(reduceValue(st.Partition, blocks, sum), attemptTag(readShuffle(st), st.Partition, tid)...)}
}

// encodeOutput is a task's output as its executor sends it, with the Mesos
// state it ends in: the stage task function's encoded result inline in a
// FINISHED update, or — when a block could not be read — a FAILED update
// with the FetchFailed end reason naming the block, as the executor runtime
// sends it (Spark's FetchFailed TaskEndReason).
func encodeOutput(taskID uint64, out stagetask.Output) ([]byte, mesos.TaskState, error) {
	u, state, err := wireOutput(taskID, out)
	if err != nil {
		return nil, 0, err
	}
	data, err := u.Marshal()
	return data, state, err
}

// wireOutput is encodeOutput's update before it is marshalled (a coarse
// executor sends it on its stream as it is).
func wireOutput(taskID uint64, out stagetask.Output) (*flintpb.StatusUpdate, mesos.TaskState, error) {
	if ff := out.FetchFailure; ff != nil {
		return &flintpb.StatusUpdate{TaskId: taskID, State: flintpb.TaskState_TASK_FAILED,
			Failure: flintconv.FetchFailedFailure(ff)}, mesos.TASK_FAILED, nil
	}
	raw, err := out.MarshalBinary()
	if err != nil {
		return nil, 0, err
	}
	enc, err := codec.Gob.Marshal(raw)
	if err != nil {
		return nil, 0, err
	}
	return &flintpb.StatusUpdate{TaskId: taskID, State: flintpb.TaskState_TASK_FINISHED,
		Result: &flintpb.TaskResult{Value: &flintpb.TaskResult_Inline{Inline: enc}}}, mesos.TASK_FINISHED, nil
}
