// Package shuffle is the map side and the merge of Flint's sort shuffle
// (Spark's SortShuffleWriter, ExternalSorter and IndexShuffleBlockResolver).
//
// A map task writes its records through a Writer (or a CombiningWriter,
// for map-side combine with an Aggregator) into an in-memory buffer
// sorted by (reduce partition, key) — keys as encoded bytes, compared
// by a radix sort on their first 16 bytes. The buffer grows under the task's Grant of
// the executor's shuffle Memory (flint.shuffle.memoryFraction of
// flint.executor.memory, shared fairly by running tasks); when a grant is
// refused, the buffer is spilled to disk as a sorted run. Commit merges
// the runs and what is in memory into one data file and one index file
// (P+1 offsets) in the executor's Store, written under temporary names
// and renamed into place; the first attempt of a map index to commit
// wins, and later attempts return its sizes. The format of the files is
// package shuffleblock's: compressed, checksummed frames.
//
// The reduce side merges sorted blocks with ExternalMerge, a k-way merge
// (a loser tree: one comparison per level for each record) that opens at most fan-in streams at once (writing intermediate runs
// when there are more) and combines equal keys, so a reduce partition
// larger than memory streams through in bounded memory.
//
// Store.RemoveShuffle deletes a released shuffle's files; Store.Close
// deletes the executor's whole shuffle directory when the application
// ends. Errors are prefixed "shuffle: " and name the directory a failed
// write was going to.
package shuffle
