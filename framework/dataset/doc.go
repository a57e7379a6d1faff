// Package dataset is Flint's typed, lazy, Spark-RDD-style API: a job's
// body builds a graph of Dataset[T] values with ordinary Go closures, and
// its actions run that graph as stages on the executors, with the data
// staying there.
//
// # Shipping code: name the job, not every function
//
// Go cannot serialise a closure, and one binary is both driver and
// executor. So a job is registered at init under a name:
//
//	var wordCount = dataset.Job("wordcount", func(b *dataset.Builder, paths []string) error {
//		lines := dataset.TextFile(b, paths...)
//		words := dataset.FlatMap(lines, splitWords)
//		counts := dataset.ReduceByKey(dataset.Map(words, one), add, 0)
//		top, err := dataset.Collect(counts)
//		…
//	})
//
// and run on a driver with wordCount.Run(ctx, fc, paths). The driver runs
// the body: transformations only add nodes to the graph; each action
// plans a job of stages split at shuffles (framework/dagscheduler) and
// runs its tasks. An executor that must run a task of the job runs the
// same body with the same encoded arguments, rebuilding the same graph,
// and executes only its task's pipeline. Closures capturing the job's
// arguments and locals therefore just work, and types are checked by the
// compiler. The arguments travel gob encoded: Run refuses, before anything
// runs, arguments that would not arrive as they are (a non-nil func, chan
// or unsafe.Pointer, an unexported field holding a value, a cyclic value;
// ErrArgumentCannotTravel, Spark's "Task not serializable"). The same
// check refuses a Value's result and a broadcast value that would not
// arrive as they are, failing the job's next action before any task runs
// (ErrValueCannotTravel).
//
// What keeps that safe:
//
//   - A node's identity is (operator, call site, per-site counter). The
//     driver sends a fingerprint of the graph (node ids, element types,
//     partition counts, edges) with every task; an executor whose rebuilt
//     graph differs fails the task with ErrGraphMismatch naming the first
//     differing node — never a wrong result.
//   - What could differ between processes is frozen on the driver and
//     replayed on executors: Value(b, key, fn) for times, seeds and
//     anything read from outside; TextFile's listing and splits; sampled
//     range bounds; and the result of every earlier action of the run
//     (an executor replaying the body gets the driver's results for the
//     actions before its task's, and the body stops at that action).
//   - Executors check at registration that their binary has the driver's
//     SHA-256 and their function registry (which holds every job) the
//     driver's fingerprint; flint.Main freezes the registry, so a job
//     registered later panics at once.
//
// The body runs once on the driver and once per executor per action that
// executor runs tasks of (rebuilt graphs are cached), so keep it cheap:
// data belongs in sources, not in the body. Builder.Out is standard output
// on the driver and io.Discard on executors.
//
// # Execution
//
// Narrow operations (Map, Filter, FlatMap, MapPartitions, KeyBy,
// MapValues, Union, Coalesce, Sample) are pipelined into one task per
// partition, passing []T batches from one closure to the next: no
// reflection per record. Wide operations (ReduceByKey, AggregateByKey,
// CombineByKey, GroupByKey, Distinct, CoGroup and the joins, SortByKey,
// PartitionBy, Repartition) end a stage: its map tasks write sorted,
// compressed shuffle files through package shuffle, records encoded by
// codecs chosen at build time (framework/recordcodec), keys partitioned by
// a fixed-seed hash or by range bounds sampled from the input; reducers
// merge the blocks of every map output. Each action is a job of stages on
// the Context's driver (driver.Driver.RunStages, reached through
// internal/driverseam): the driver loop's DAG core
// plans it, its tasks run on the executors as the job's stage task
// function against the executor's shuffle (shuffle/shuffleenv: files
// served to reducers on other hosts over the executor's TLS shuffle
// server, fetched under the in-flight limits and merged in bounded
// memory; read from disk on the same host, as in local mode), and map
// statuses go to the driver's map-output tracker. Shuffle ids come from
// the Context and are frozen with the job, so a later action of the run
// over the same shuffle skips its map stage when its outputs are all
// available; the run releases its shuffles when it ends. A block that
// cannot be read is a fetch failure (never counted toward
// flint.task.maxFailures): the DAG core recomputes the map output and
// resubmits the stage; a lost executor's outputs are unregistered as soon
// as the backend reports the loss. A lost executor costs time, not
// results.
//
// A recomputed partition must hold the records its first computation
// held, or readers of both would mix two runs. A shuffle's reducers merge
// blocks as they arrive, so only combining shuffles (ReduceByKey,
// AggregateByKey, CombineByKey, Distinct: sorted, one record per key) give
// their records in a fixed order. Operations that choose records by
// position — Repartition's round robin, Sample's draws, and MapPartitions
// unless declared OrderInsensitive — are therefore indeterminate over any
// other shuffle's output, as is everything computed from them (Spark's
// DeterministicLevel, SPARK-23207): when an output of such a stage is
// lost, the DAG core reruns the stage whole, with every stage that read
// it, and recomputes results of the action already in (the driver holds
// them until the action ends). Each rerun's map outputs carry its stage
// attempt, so they replace the rolled-back ones on an executor that held
// them.
//
// Accumulating actions (Collect, Count, Take, First, Reduce, Fold,
// Aggregate, Foreach, CountByKey, SaveAsTextFile) keep one result per
// partition: the DAG core accepts the first successful attempt of each.
//
// # Spark's operations, and where Flint differs
//
// Besides the operations above: Glom, MapPartitionsWithIndex, Zip,
// ZipWithIndex, ZipWithUniqueID, Cartesian, Subtract, Intersection,
// EmptyDataset, SampleWithReplacement, RandomSplit, SortByLess (any key
// type, with a less func), RepartitionAndSortWithinPartitions; for keyed
// datasets FlatMapValues, FoldByKey, SubtractByKey, CoGroup3, CoGroup4,
// SampleByKey, SampleByKeyExact, CountApproxDistinctByKey; actions Top,
// TakeOrdered, TakeSample, TreeAggregate, TreeReduce, ToLocalIterator (a
// Go iterator, one job per partition), Stats, CountApproxDistinct,
// CountByValue, Lookup and CollectAsMap; Checkpoint. The source
// ParallelizeWithHosts gives one record per partition, each preferring
// hosts (Spark's makeRDD with location preferences); WholeTextFiles and
// BinaryFiles give one record per file (its path and whole content).
// Wide operations taking a partition count have a ...With form taking a
// Partitioner (keys arrive encoded with recordcodec.For).
//
// A dataset knows its Partitioner: wide operations set it, Filter,
// MapValues, FlatMapValues, Sample and the joins keep it, Map and the
// others drop it (they may change keys). A cogroup or join whose input is
// already partitioned by the operation's partitioner reads it where it is
// (a one-to-one dependency, sorted in memory), a combine by key on its
// own partitioner runs without a shuffle, and Lookup on a partitioned
// dataset computes one partition. Union of inputs that all have the same
// partitioner (ignoring inputs without partitions) is partitioner-aware,
// as Spark's SparkContext.union: partition p is partition p of each
// input, and the result keeps the partitioner and its count instead of
// concatenating the inputs' partitions. SortByKey, SortBy and SortByLess
// pick range bounds as Spark's RangePartitioner: a reservoir of
// ⌈3·20·parts / input partitions⌉ keys per input partition, each key
// weighted by its partition's size over its sample's, partitions much
// larger than average sampled again at the overall rate, and bounds
// cutting the sorted, weighted sample into equal weights; skewed input
// gives balanced output partitions. With parts ≤ 0 every wide operation
// on keys picks its partitioner as Spark's defaultPartitioner: of its
// inputs that have a partitioner, the one with the most partitions lends
// it — unless the largest input has ten or more times as many partitions
// and that partitioner has fewer than the default count — else a hash
// partitioner of the default count (flint.default.parallelism when set,
// else the largest input's partition count). So ReduceByKey, GroupByKey,
// AggregateByKey, FoldByKey, CombineByKey, CountApproxDistinctByKey and
// CountByKey over a partitioned dataset combine where it is, without a
// shuffle, keeping its partitioner (a range partitioner from SortByKey
// included), a cogroup or join reads such an input where it is, and
// Distinct of a partitioned dataset with its own count deduplicates in
// place.
//
// Deliberate differences: Go has no overloading, so optional arguments
// are explicit (withReplacement, seed, depth, relativeSD, parts ≤ 0 for
// the default). TakeSample and SampleByKeyExact are exact in two jobs
// (count, then collect the positions drawn from the seed's stream)
// instead of Spark's sample-and-retry, so they draw other records than
// Spark for the same seed. CountApproxDistinct uses HyperLogLog++'s
// registers, sparse form and linear-counting thresholds but not its
// empirical bias tables (a few percent high between 2.5 and 5 times 2^p
// distinct values), and hashes each value's record-codec encoding, so
// its estimates differ from Spark's within the stated error. FoldByKey,
// AggregateByKeyWith and TreeAggregate give every key and partition its
// own copy of zero (a value without pointers is assigned, any other is
// decoded afresh from its record-codec encoding). Order- and
// position-dependent operations (ZipWithIndex, ZipWithUniqueID, Zip,
// the samplers, RandomSplit) are deterministic given their input's order
// and seed, and are marked to depend on that order, so after a shuffle
// they are rerun whole when their output is lost.
//
// # What a job body may do
//
// A body may build datasets from its arguments and deterministic code,
// and use the results of its actions. It must freeze with Value anything
// that could differ between processes (the time, random seeds, the
// environment, files or services read in the body): data handed to
// Parallelize, Range's bounds and Sample's seed are part of the graph's
// fingerprint, so an executor whose replay computed other data fails the
// task with ErrGraphMismatch, at once and naming the node, never with a
// different answer (local mode replays the body too). Side effects
// between actions (writing files, calling services) run again on every
// executor replaying the body: guard them with Driver, and print to Out.
// Closures' captured variables are not fingerprinted: what they read
// must come from the same frozen or deterministic sources. See
// ExampleValue.
//
// # Task context
//
// A closure that needs to know about its task gets a TaskContext through
// MapPartitionsWithContext (Spark's TaskContext.get() and SparkFiles):
// Partition, StageID, StageAttempt, Attempt (0 for a task's first
// attempt), TaskAttemptID, ExecutorID, Context (done when the task is
// killed: its job cancelled, a speculative copy won, the run ended),
// Config (the job's flint.* settings) and File (the local copy of a file
// added with Context.AddFile, AddDir or AddArchive). Other closures (Map,
// Filter, …) take records only, as in Go nothing global can stand for
// Spark's thread-local TaskContext.get().
//
// # Task payloads
//
// Every task carries what an executor needs to replay the body: the
// job's arguments, its frozen values and the results of the run's
// earlier actions. As Spark broadcasts its task binaries, any of these of
// 16 KiB or more (and the largest others while the rest exceeds 256 KiB)
// travels instead as a file added to the Context: each executor fetches
// it once per run and decodes it once, whichever actions carry it, and
// drops it when the run ends. What stays with every task (mostly the
// graph's fingerprint) is checked against the backend's limit (fine
// mode's 4 MiB LAUNCH record, coarse mode's gRPC message) before any task
// runs: an action over it fails at once with framework.ErrTaskTooLarge,
// naming the sizes of its parts, instead of killing executors.
//
// # Caching
//
// Cache (Persist(ds, MemoryOnly)), Persist(ds, MemoryAndDisk) and
// Persist(ds, DiskOnly) keep a dataset's partitions on the executors that
// compute them: the driver's DAG core learns where each is and prefers
// that executor for later tasks of the partition. Memory levels stay
// within each executor's storage budget (flint.storage.memory), and the
// partitions they keep hold their own bytes: the strings of the records
// kept in memory are copied (package internal/detach), so a persisted
// sparse Filter of a TextFile keeps its lines, not the 256 KiB chunks they
// were read into, and the budget counts what is held. A
// MemoryAndDisk partition that does not fit is written to the executor's
// local directory with the record codec and read back; a MemoryOnly one
// is not kept. DiskOnly writes every partition there as it is computed
// and holds none in memory. Unpersist drops the partitions (memory and
// files); the run's end and the executor's exit drop them too. A
// partition whose executor is lost is recomputed from lineage.
// Spark's serialized levels (MEMORY_ONLY_SER, MEMORY_AND_DISK_SER) and
// replicated levels (…_2) are not offered; StorageLevel's documentation
// says why.
//
// # Who owns the runtime state
//
// Nothing a running application holds lives in a package variable. The
// cached partitions, the broadcast and payload copies an executor
// loaded, the graphs its tasks rebuilt and, on a driver, the numbers of
// the broadcasts it published are one state per application per process,
// kept in its runtime environment (framework/stagetask.Env). The
// environment's creator owns it: the local backend makes one per Context
// (so two local Contexts in one process never see each other's cache,
// budget, evictions or broadcasts), each coarse or fine executor one for
// its application, and a Context without an in-process executor a
// driver-only one. Tasks find it in their context (stagetask.EnvFrom);
// the driver side reaches its Context's through internal/driverseam.
// Closing it — the backend's or executor's stop, the Context's Stop —
// drops every cached partition, broadcast copy and rebuilt graph, files
// included. What stays process-wide is code: the jobs Job and JobResult
// register by name at init (and the stage task functions they add) are
// the binary's, the same in every Context, as gob.Register's types are;
// flint.Main freezes them before any Context exists.
//
// # Checkpointing
//
// Checkpoint(ds) marks a dataset to be saved to reliable storage (Spark's
// RDD.checkpoint): the directory is flint.checkpoint.dir, or the body's
// Builder.SetCheckpointDir, on any writable storage scheme (a local
// directory every executor shares, s3://…). Nothing is written when
// Checkpoint is called. When the next action whose job computes ds ends,
// a separate job computes every partition of ds again (persist ds first
// to read it from there instead) and writes it under
// <dir>/<job>-<run>/<dataset id>/part-NNNNN with the record codec,
// committed as SaveAsTextFile's output. From then on ds is a source: later
// actions, and any recomputation after a lost executor or a fetch
// failure, read its files, and its parents (their shuffles included) are
// no longer part of any job. IsCheckpointed says whether that happened.
// ds keeps its Partitioner. The files are kept after the run, as Spark
// keeps them.
//
// # Accumulators
//
// NewAccumulator (any type, with an associative and commutative merge)
// and Counter create accumulators in the body; closures Add to them on
// the executors and Value on the driver reads the merged result. A job
// with accumulators replays its body once per task (not once per
// executor and action), so each task's updates are its own; they travel
// with the task's output. Updates made in an action's final stage are
// applied exactly once per partition, however many attempts ran (retries,
// speculative copies, resubmitted stages), as Spark does for actions;
// updates made in map stages are applied once per successful map task, so
// a recomputed map output applies them again.
//
// # Broadcast variables
//
// NewBroadcast(b, v) in the body makes a read-only value every task can
// read with Value, sent once per executor instead of with every task: the
// driver encodes it (record codec of T), writes it in compressed,
// checksummed chunks and adds the file to the Context (the driver's file
// server serves it); each executor fetches it with its first task of a
// later stage and decodes it at the first Value, and its tasks share that
// copy. Executors get the frozen handle, so compute a large value under
// b.Driver(). Destroy (or the run's end) releases it: the driver stops
// listing it in tasks and its file server stops serving it (410 Gone);
// each executor drops its copy at its next task of a stage submitted
// after the release (the task's job carries the driver's broadcast
// number when the action was planned, so a broadcast added later by
// another run is not mistaken for a released one).
//
// # Where Flint deliberately differs from Spark
//
//   - Partition counts of 0 (or less) mean "the default" where Spark
//     throws (Repartition(ds, 0), Parallelize(b, xs, 0) and every wide
//     operation's parts; Coalesce(ds, 0) keeps the count): Go has no
//     optional arguments, so 0 stands for Spark's omitted one, and a wide
//     operation's 0 follows Spark's defaultPartitioner exactly (see
//     above); Distinct and SortByKey keep their input's count, as Spark's
//     distinct() and sortByKey().
//   - A partitioner that came with another encoding of the keys counts
//     for the operations that can use it: a dataset sorted by integer
//     keys (SortByKey encodes them order-preserving) is reused by
//     ReduceByKey, GroupByKey, Distinct, CoGroup and the joins with
//     parts ≤ 0, but the ...With forms take a Partitioner over
//     recordcodec.For keys, so ReduceByKeyWith(ds, fn, ds.Partitioner())
//     on such a dataset shuffles (into the same partition count) where
//     Spark would not; pass parts 0 instead.
//   - Subtract on a dataset of pairs that has a partitioner routes
//     records by a hash of the whole record, where Spark's subtract keeps
//     the input's partitioner on the key: the partition count and the
//     records are the same, only which partition holds a record differs
//     (SubtractByKey uses the input's partitioner as Spark does).
//   - MapPartitions is taken to depend on its input's order unless given
//     OrderInsensitive (Spark assumes the opposite, isOrderSensitive =
//     false): after an unordered shuffle its stage is rerun whole when an
//     output is lost, a cost in time, never a wrong answer.
//   - A combining shuffle's output (ReduceByKey, AggregateByKey,
//     CombineByKey, Distinct) counts as determinate, not unordered as in
//     Spark: its reducers merge by key and emit one record per key, so
//     Repartition after ReduceByKey recomputes a lost output alone.
//   - When an indeterminate stage is rolled back after the action's result
//     stage returned some partitions, Spark fails the job; Flint holds an
//     action's results until it ends, so it drops them and recomputes the
//     result stage from the new run.
//   - Fold and Aggregate copy the zero value per task, and AggregateByKey
//     per key, as Spark does — by assignment for values holding no
//     references, else through the record codec (Spark serialises it
//     with its closure serialiser): a zero with unexported fields that gob
//     cannot encode is refused with the action's error.
//   - Reduce and First on an empty dataset return ok == false instead of
//     throwing.
//   - BinaryFiles gives each file's bytes, read by the task, instead of
//     Spark's PortableDataStream (Go has no lazy stream to serialise);
//     it and WholeTextFiles pack whole files into min(minParts, files)
//     partitions of about equal bytes, in listing order.
//   - Broadcast.Destroy returns ErrBroadcastDestroyed when called twice
//     (Spark throws), naming where it was destroyed, as does Value.
//   - Coalesce groups parents by the preferred hosts the graph knows when
//     it is built — file splits', ParallelizeWithHosts', and through
//     narrow operations their children's — as Spark's
//     DefaultPartitionCoalescer (a group per host, balance slack 0.10,
//     the power of two choices), but not by where cached partitions are:
//     those are known only as actions run, while every process must build
//     the same groups when it replays the body. Its random choices come
//     from a fixed seed, so for the same input it may group otherwise
//     than Spark's (which seeds Scala's generator), by the same rules.
//   - Checkpoint writes after the action whose job computed the dataset,
//     by a job of its own, as Spark's; the files stay readable by that run
//     only (Spark's SparkContext.checkpointFile, which reads another
//     run's, has no Flint equivalent), and local checkpoints
//     (localCheckpoint) are not offered: Persist(ds, DiskOnly) keeps
//     partitions on the executors' disks, and a lost executor's are
//     recomputed from lineage.
//   - Stage names follow Spark's short call sites: a map stage is named
//     for the dataset whose records it writes to the shuffle, by the
//     operation the user called where it was built ("map at
//     wc.go:12"; the map CountByKey builds is "countByKey at …"), and a
//     result stage for its action.
package dataset
