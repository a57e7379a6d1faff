// Package gcfloor gives Go's garbage collector room in a process that runs
// Flint's tasks: while a floor is held, the collector lets the heap grow to
// at least that many bytes between collections, whatever little is live.
//
// Why: a task that reads data allocates every byte it reads (a TextFile
// line is a string over the bytes read, so that any later operator may keep
// it), while the process's live heap stays a few MiB. With GOGC=100 the
// collector then runs every few MiB of input — hundreds of cycles per GiB,
// each with its stop-the-world pauses, mark work and write barriers charged
// to the reading task (docs/benchmarks.md, issue 25: about 40 % of a text
// scan's CPU). A JVM collects its young generation only when a sizeable
// share of the heap fills; the Go analogue is a heap floor: a GC percent
// raised while the live heap is small, back to the base once the live heap
// alone fills the floor. It costs at most the floor in memory.
//
// How: after each collection (a cleanup on a sentinel object re-armed every
// cycle), the GC percent is set to the least value ≥ the base for which the
// next heap goal reaches the floor (Percent). The base is the percent the
// process had when the first floor was taken; releasing the last floor puts
// it back. Floors nest: the largest held counts. A process whose
// environment sets GOGC has chosen its collector's pacing: Hold leaves it
// alone. GOMEMLIMIT still caps the heap: the runtime's goal is the lower
// of the two.
//
// Who holds one: every process that runs Flint's tasks, by one policy (ForMemory: 1/16 of
// flint.executor.memory, at most 256 MiB) — the local backend in the driver's process while a
// Context runs, and Mesos executors (both modes) from their first step, given the floor by
// their backend in EnvFloor (HoldFromEnv).
//
// One owner: only this package sets the GC percent while a floor is held
// (a debug.SetGCPercent call elsewhere is overwritten at the next cycle).
package gcfloor
