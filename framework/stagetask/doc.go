// Package stagetask is the contract between the driver, the executors and
// the dataset layer for one task of a stage (the DAG core's
// dagscheduler.Task, as an executor runs it).
//
// The driver sends a Task: the registered job whose graph the executor
// rebuilds (Job, Args), the last node of the stage's pipeline (Node), the
// partition, and for a map task the shuffle to write. Reads lists every
// reduce partition of a shuffle the pipeline reads, and Statuses, per
// shuffle, where the executor finds its map statuses (a StatusRef: the
// tracker's epoch at launch and the task's file holding the snapshot, or
// none for an in-process source). The executor's MapStatuses (one per
// application, in its Env) loads a shuffle's snapshot once per epoch — the
// tasks asking meanwhile wait for that load — and cuts each task's blocks
// by location (mapoutput.FetchGroup) from it before the runner runs, so a
// task's description does not grow with the map outputs (Spark's
// MapOutputTrackerWorker). A task naming a newer epoch drops older
// snapshots; a snapshot missing an output is not kept; a fetch failure and
// the shuffle's release (Env.ReleaseShuffle) drop the shuffle's. Each job's
// tasks run as the task function FunctionPrefix+job, which Register adds
// to the task registry (so executors' registry fingerprints cover stage
// jobs): its input is the encoded Task and its output the encoded Output —
// a map task's block sizes and location, or a result task's value. A
// task that could not read a shuffle block returns the
// *mapoutput.FetchFailure as its error: the executor runtime ends the
// attempt Failed with the FetchFailed end reason naming the block
// (flintpb.TaskFailure.fetch_failed, Spark's FetchFailed TaskEndReason),
// which the driver hands to the DAG core.
//
// A Runner (the dataset layer, or a test) registered under the job's name
// with Register runs a task's pipeline against the executor's shuffle
// (shuffle/shuffleenv, which every executor holds: the local backend's,
// coarse and fine executors'): Shuffle is its byte-level view (EnvShuffle)
// — Create opens a map output for writing, Open merges a reduce
// partition's blocks, same-host ones read from disk and the others
// fetched from their executors' servers (shuffle/shufflefetch). Runners
// needing typed writers use the executor's shuffleenv.Env itself
// (shuffleenv.FromContext). driver.Driver.RunStages runs a job of
// stages this way through the driver loop's DAG core in every mode.
//
// # The environment
//
// An Env is one application's runtime state in one process: the
// executor's shuffle and, by key, what the layers above keep beyond a
// task (the dataset layer's cached partitions, loaded broadcasts, rebuilt
// graphs and broadcast numbers). Its creator owns it and hands it to
// tasks through the base context of the executor runtime (NewContext;
// EnvFrom reads it): the local backend makes one per Context (the
// Context reaches it as the backend's TaskEnv), each coarse or fine
// executor one for the application it runs, and a Context without an
// in-process executor a driver-only one. Closing it (the backend's or
// executor's Stop, the Context's Stop) releases that state, files
// included; two Contexts in one process never share it. Registrations
// (Register, and the jobs the dataset layer registers by name at init)
// are code, not state, and stay process-wide like gob.Register.
package stagetask
