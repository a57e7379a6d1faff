// Package mapoutput is the driver-side map-output tracker (Spark's
// MapOutputTrackerMaster and MapStatus) and the contract types that the
// shuffle's two sides share with the DAG core.
//
// A map output is identified by (ShuffleID, MapIndex) and written by one
// task attempt. The executor that ran the attempt reports a Status: where
// the output is served from (a Location: executor, host and the executor's
// shuffle-serving address) and the size in bytes of each reduce
// partition's block. A reducer that cannot read a block reports a
// FetchFailure naming the shuffle, map index, reduce index and location.
// Executor-side code imports this package without importing the DAG core.
//
// # Tracker
//
// The Tracker records, per shuffle, which map index's output lives where,
// with each block's size compressed as Spark does:
//
//   - below Config.MinPartitionsToHighlyCompress reducers (default 2,000),
//     one byte per reducer: ceil(log base 1.1 of the size), so a decoded
//     size is at most 10 % above the real one (0 stays 0);
//   - from there on, the empty blocks plus the average size of the
//     non-empty ones, with exact sizes for blocks of at least
//     Config.AccurateBlockThreshold bytes (default 100 MiB), so skew is
//     never hidden by the average; the empty blocks are a bitmap, or the
//     list of their indices when fewer than one in 32 are empty (as
//     Spark's RoaringBitmap keeps a sparse set): 10,000 reducers with no
//     empty block take 13 bytes, not 1,259.
//
// MapOutputBytes and LocationBytes account what the tracker holds (map
// output records, encoded sizes, interned locations).
//
// Reducers ask the tracker (or a Snapshot of one shuffle, which can be
// encoded and shipped to executors) which blocks to fetch from where;
// empty blocks are left out. Every change that loses outputs increments
// the tracker's epoch: an executor holding a cached snapshot older than the
// epoch a task carries must refresh it. The tracker is pure: no I/O, no
// clock, no goroutines; it is not safe for concurrent use (the driver loop
// owns it).
package mapoutput
