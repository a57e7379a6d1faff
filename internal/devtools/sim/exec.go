package sim

import (
	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"fmt"
	"hash/fnv"
	"strconv"

	flintexec "github.com/flint-mesos/flint/executor"
	"github.com/flint-mesos/flint/framework/codec"
	"github.com/flint-mesos/flint/framework/mapoutput"
	"github.com/flint-mesos/flint/framework/stagetask"
	"github.com/flint-mesos/flint/proto/flintpb"
)

// The simulated task bodies. A map task of shuffle s, partition m writes
// block (m, r) of every reduce partition r, of mapValue(s, m, r) records
// (never 0, so every block is listed); its output stays on its executor
// until the executor ends or the shuffle is released. A result task of
// partition r reads the blocks its stage task lists, from the executors
// they name: a block whose executor is gone or no longer holds it is a
// fetch failure naming it, as a real reducer's; otherwise its value counts
// the blocks read and sums their records. expectedReduce is that value
// when every map output was read once: a result built from a stale or
// incomplete snapshot differs.

type outputKey struct{ shuffle, mapIndex int }

func mapValue(shuffle, m, r int) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(strconv.Itoa(shuffle) + "/" + strconv.Itoa(m) + "/" + strconv.Itoa(r)))
	return 1 + h.Sum64()%1000
}

func reduceValue(r, blocks int, sum uint64) []byte {
	return []byte(fmt.Sprintf("r%d:%d blocks:%d records", r, blocks, sum))
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
	var raw []byte
	if err := codec.Gob.Unmarshal(td.Input, &raw); err != nil {
		return nil, nil, fmt.Errorf("input: %w", err)
	}
	var st stagetask.Task
	if err := st.UnmarshalBinary(raw); err != nil {
		return nil, nil, fmt.Errorf("stage task: %w", err)
	}
	return &td, &st, nil
}

// execute is a task's body run on its executor when its time is up: the
// output the driver's DAG core reads.
func (m *master) execute(t *mtask) stagetask.Output {
	st := t.stage
	if st.Kind == stagetask.Map {
		sizes := make([]uint64, st.NumReduces)
		for r := range sizes {
			sizes[r] = 100 * mapValue(st.ShuffleID, st.Partition, r)
		}
		e := m.agents[t.agent].execs[t.exec]
		e.outputs[outputKey{st.ShuffleID, st.Partition}] = true
		return stagetask.Output{Sizes: sizes, Location: mapoutput.Location{Host: m.agents[t.agent].host, Address: t.exec}}
	}
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
					m.s.logf("task %s: fetch of shuffle %d map %d from %s failed", t.id, rd.ShuffleID, b.MapIndex, g.Location.ExecutorID)
					return stagetask.Output{FetchFailure: ff}
				case inject:
					ff.Message = "sim: injected fetch failure"
					m.s.logf("FAULT task %s: fetch of shuffle %d map %d from %s fails", t.id, rd.ShuffleID, b.MapIndex, g.Location.ExecutorID)
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
	return stagetask.Output{Value: reduceValue(st.Partition, blocks, sum)}
}

// encodeOutput is a task's output as its executor sends it, with the Mesos
// state it ends in: the stage task function's encoded result inline in a
// FINISHED update, or — when a block could not be read — a FAILED update
// with the FetchFailed end reason naming the block, as the executor runtime
// sends it (Spark's FetchFailed TaskEndReason).
func encodeOutput(taskID uint64, out stagetask.Output) ([]byte, mesos.TaskState, error) {
	if ff := out.FetchFailure; ff != nil {
		data, err := (&flintpb.StatusUpdate{TaskId: taskID, State: flintpb.TaskState_TASK_FAILED,
			Failure: flintexec.FetchFailed(ff)}).Marshal()
		return data, mesos.TASK_FAILED, err
	}
	raw, err := out.MarshalBinary()
	if err != nil {
		return nil, 0, err
	}
	enc, err := codec.Gob.Marshal(raw)
	if err != nil {
		return nil, 0, err
	}
	data, err := (&flintpb.StatusUpdate{TaskId: taskID, State: flintpb.TaskState_TASK_FINISHED,
		Result: &flintpb.TaskResult{Value: &flintpb.TaskResult_Inline{Inline: enc}}}).Marshal()
	return data, mesos.TASK_FINISHED, err
}
