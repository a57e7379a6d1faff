package dataset

import "github.com/flint-mesos/flint/framework/dagscheduler"

// partitionerAwareUnion is the union of datasets all partitioned by the
// same partitioner over the same key encoding (Spark's
// PartitionerAwareUnionRDD, which SparkContext.union picks when every
// input has the partitioner): partition p is partition p of each input in
// turn, so the result keeps the partitioner and its partition count and a
// later join or combine on it needs no shuffle. Inputs without
// partitions do not count (SPARK-23778). ok is false when the inputs are
// not all partitioned alike.
func partitionerAwareUnion[T any](all []Dataset[T]) (u Dataset[T], ok bool) {
	var with []Dataset[T]
	for _, d := range all {
		if d.n.parts > 0 {
			with = append(with, d)
		}
	}
	if len(with) == 0 || with[0].n.partitioning == nil {
		return u, false
	}
	first := with[0].n.partitioning
	var parents []node
	var deps []dagscheduler.Dep
	for _, d := range with {
		if !partitionedLike(d.n.info(), first.part, first.codecName) {
			return u, false
		}
		parents = append(parents, d.n)
		deps = append(deps, dagscheduler.Dep{Kind: dagscheduler.OneToOne, Parent: d.n.id})
	}
	u = newNode(with[0].n.b, "partitionerAwareUnion", first.part.NumPartitions(), parents, deps,
		func(tc *taskContext, p int, emit func([]T) error) error {
			for _, d := range with {
				if err := d.n.run(tc, p, emit); err != nil {
					return err
				}
			}
			return nil
		})
	u.n.partitioning = first
	return u, true
}
