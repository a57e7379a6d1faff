// Package shufflefetch is the reduce side of the shuffle (Spark's
// ShuffleBlockFetcherIterator): a reduce task's blocks, fetched and
// merged.
//
// Given the blocks of its reduce partition by location (from the driver's
// map-output tracker, mapoutput.Snapshot.Blocks: empty blocks are already
// left out), Fetch reads those on this host straight from the writing
// executor's files (the Address names its directory; local mode is all
// such reads) and fetches the rest from their executors' shuffle servers
// concurrently, in random order across executors, with at most
// flint.reducer.maxSizeInFlight bytes (always at least one block) and
// flint.reducer.maxReqsInFlight requests outstanding. A failed fetch is
// retried flint.shuffle.io.maxRetries times flint.shuffle.io.retryWait
// apart; a block whose checksums do not match is fetched once more and
// never used. Whatever cannot be read ends the fetch with a
// *mapoutput.FetchFailure naming the shuffle, map index, reduce index and
// location, which the DAG core turns into recomputing that map output; a
// missing output (404) or a refused credential is not retried.
//
// Fetched blocks stay in memory while the task's Grant allows and go to a
// spill file in the task's directory beyond it. Read then merges all the
// blocks with shuffle.ExternalMerge (k-way, combining equal keys for
// aggregations, in passes when there are more blocks than the fan-in), so
// a reduce partition several times larger than memory streams through.
package shufflefetch
