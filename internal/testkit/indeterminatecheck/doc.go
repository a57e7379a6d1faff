// Package indeterminatecheck is the executor-loss scenario both Mesos
// modes' tests run for Spark's SPARK-23207: Repartition after a shuffle
// on two hosts, with the executor that ran the job's n-th task SIGKILLed
// for each n the test picks, every run's sums compared with sums computed
// in plain Go. After an unordered shuffle (partitionBy) Repartition's map
// stage is indeterminate — a recomputed map task numbers its records in
// another order and sends them elsewhere — so it must be rerun whole with
// every stage reading it; after reduceByKey (sorted, one record per key)
// it is determinate and a lost output is recomputed alone.
//
// The package registers its job (RepartitionAfterShuffle) at init, so a
// test binary that imports it has the job on its executors too. A test
// starts its own two-host cluster and a Context on it, adds a Killer that
// finds executor processes its own way, and calls Kills:
//
//	k := &indeterminatecheck.Killer{Procs: procs, OnError: func(err error) { t.Error(err) }}
//	fc.AddListener(k)
//	indeterminatecheck.Kills(t, fc, k, indeterminatecheck.Args{…, Before: "partitionBy"}, points, indeterminatecheck.Options{})
package indeterminatecheck
