package dataset

// order is how much of a node's output is fixed by its lineage (Spark's
// DeterministicLevel). The driver's DAG core reruns a map stage whose
// pipeline holds an indeterminate node as a whole, with every stage
// reading it, when any of its outputs is lost (framework/dagscheduler);
// the other levels let a lost output be recomputed alone.
type order uint8

const (
	// determinate: every computation of a partition gives the same
	// records in the same order (sources, and what record-wise operations
	// and combining shuffles make of them).
	determinate order = iota
	// unordered: the same records, in an order that may differ between
	// computations — a shuffle's reducers merge blocks as they arrive, so
	// records of one key (GroupByKey's values, a join's pairs, equal
	// SortByKey keys) or of a whole unsorted partition (PartitionBy,
	// Repartition) may come in another order.
	unordered
	// indeterminate: the records themselves may differ — an operation
	// chose them by their position in an input that is not determinate
	// (Repartition's round robin, Sample's draws, a MapPartitions
	// function), or by randomness; and everything computed from such a
	// node.
	indeterminate
)

// dependsOnOrder marks n as choosing records by their position in its
// input (a round robin, a sample drawn along the stream, an index): it is
// indeterminate unless its input's order is determinate. Call it right
// after creating the node, e.g. ds.n.dependsOnOrder().
func (n *nodeInfo) dependsOnOrder() {
	if n.order != determinate {
		n.order = indeterminate
	}
}

// nondeterministic marks n as indeterminate whatever its input: its
// output differs between runs (randomness not derived from a frozen seed
// and the partition).
func (n *nodeInfo) nondeterministic() { n.order = indeterminate }

// sortedUnique marks a shuffle reader whose records come sorted by
// encoded key with one record per key (a combining shuffle): its order is
// fixed by its records, so it is determinate unless its input's records
// are not.
func (n *nodeInfo) sortedUnique() {
	if n.order != indeterminate {
		n.order = determinate
	}
}

// inherit is the order of a node computed from parents: the least
// determinate of theirs; a shuffle's reader is at best unordered.
func inherit(parents []node, shuffle bool) order {
	o := determinate
	if shuffle {
		o = unordered
	}
	for _, p := range parents {
		o = max(o, p.info().order)
	}
	return o
}

// Determinism declares what a MapPartitions function's output depends on,
// and so what the driver must do when a partition of it is recomputed.
type Determinism uint8

const (
	// OrderSensitive (the default) says the function's output may depend
	// on the order of its input records (it numbers them, keeps the first
	// few, pairs neighbours): after a shuffle, whose reducers see records
	// in arrival order, a recomputed partition could hold other records,
	// so the stage computing it is rerun as a whole, with everything that
	// read it, when any of its output is lost.
	OrderSensitive Determinism = iota
	// OrderInsensitive says the output depends only on the partition's
	// records as a multiset (a sum, a set, records mapped or filtered one
	// by one): a lost partition is recomputed alone.
	OrderInsensitive
	// Nondeterministic says the output may differ between computations
	// of the same input (randomness not derived from a frozen seed and
	// the partition index, the time): always rerun as a whole.
	Nondeterministic
)

// apply marks n as d says.
func (d Determinism) apply(n *nodeInfo) {
	switch d {
	case OrderSensitive:
		n.dependsOnOrder()
	case Nondeterministic:
		n.nondeterministic()
	}
}
