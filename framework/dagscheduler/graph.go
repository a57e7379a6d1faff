package dagscheduler

import (
	"errors"
	"fmt"

	"github.com/flint-mesos/flint/framework/scheduler"
)

// NodeID names one dataset of a job's lineage. The dataset layer derives
// it deterministically (operator, call site, per-site counter), so the
// driver and every executor agree on it; an executor runs the pipeline
// that ends at a task's node.
type NodeID string

// DepKind is how a node reads a parent.
type DepKind int

// Dependency kinds. The narrow ones are pipelined into the child's stage;
// a shuffle starts a new stage.
const (
	OneToOne DepKind = iota // child partition i reads parent partition i
	Range                   // child partitions [Offset, Offset+parent's) read the parent's in order (union)
	Groups                  // child partition i reads parent partitions Groups[i] (coalesce)
	Shuffle                 // child partition i reads reduce partition i of ShuffleID, written by the parent
)

var depKindNames = [...]string{"OneToOne", "Range", "Groups", "Shuffle"}

func (k DepKind) String() string {
	if k >= 0 && int(k) < len(depKindNames) {
		return depKindNames[k]
	}
	return fmt.Sprintf("DepKind(%d)", int(k))
}

// Dep is one dependency of a node on a parent node.
type Dep struct {
	Kind   DepKind
	Parent NodeID
	Offset int     // Range
	Groups [][]int // Groups: len == child partitions
	// ShuffleID identifies the shuffle for Kind == Shuffle. The dataset
	// layer derives it from the lineage, so a second action over the same
	// lineage names the same shuffle and its map stage is shared (or
	// skipped when its outputs are all available).
	ShuffleID int
}

// Node is one dataset of a job's lineage (Spark's RDD), as data.
type Node struct {
	ID         NodeID
	Name       string // for the UI and explanations, e.g. "reduceByKey at wc.go:31"
	Partitions int
	Deps       []Dep
	// Preferred, when set, holds each partition's preferred locations (an
	// input split's hosts); len == Partitions.
	Preferred [][]scheduler.Location
	// Cached nodes keep partitions on executors once computed (the driver
	// reports them with CacheAdded); a fully cached node is not recomputed
	// and its partitions prefer the executors holding them.
	Cached bool
	// Indeterminate nodes may produce different output when rerun (e.g. a
	// round-robin repartition of unordered input). A map stage containing
	// one, and every stage downstream of it, is rolled back as a whole when
	// any of its output is lost; a job whose result stage already produced
	// partitions from it has them revoked and recomputed when it holds its
	// results (JobSpec.ResultsHeld), else it fails, as in Spark.
	Indeterminate bool
}

// JobSpec is an action over a lineage: run the pipeline ending at Final
// for Partitions (all when nil), a result task per partition.
type JobSpec struct {
	// Name is the registered job the executors rebuild the graph from.
	Name  string
	Pool  string
	Nodes []Node
	Final NodeID
	// Partitions of Final to compute, in result order; nil means all.
	Partitions []int
	// ResultsHeld says nothing outside the submitter sees a result before
	// the whole job succeeds (framework.Context.RunStages returns them all
	// at the end): when an indeterminate stage the result stage reads is
	// rolled back, results already accepted are revoked (ResultsRevoked)
	// and recomputed from the new run instead of failing the job, as
	// Spark must for results it has handed out.
	ResultsHeld bool
}

// ErrInvalidJob is returned by SubmitJob for a malformed job.
var ErrInvalidJob = errors.New("dagscheduler: invalid job")

// nodeInfo is a validated node with resolved parents.
type nodeInfo struct {
	Node
	parents []*nodeInfo // parallel to Deps
}

// buildGraph validates spec and resolves node references.
func buildGraph(spec *JobSpec) (map[NodeID]*nodeInfo, *nodeInfo, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w %q: %s", ErrInvalidJob, spec.Name, fmt.Sprintf(format, a...))
	}
	nodes := make(map[NodeID]*nodeInfo, len(spec.Nodes))
	for i := range spec.Nodes {
		n := &spec.Nodes[i]
		switch {
		case n.ID == "":
			return nil, nil, bad("node %d has no id", i)
		case nodes[n.ID] != nil:
			return nil, nil, bad("node %q appears twice", n.ID)
		case n.Partitions < 0:
			return nil, nil, bad("node %q has %d partitions", n.ID, n.Partitions)
		case n.Preferred != nil && len(n.Preferred) != n.Partitions:
			return nil, nil, bad("node %q has %d preferred-location lists for %d partitions", n.ID, len(n.Preferred), n.Partitions)
		}
		nodes[n.ID] = &nodeInfo{Node: *n}
	}
	for _, n := range nodes {
		n.parents = make([]*nodeInfo, len(n.Deps))
		for j, d := range n.Deps {
			p := nodes[d.Parent]
			if p == nil {
				return nil, nil, bad("node %q depends on unknown node %q", n.ID, d.Parent)
			}
			if err := checkDep(n, p, d); err != "" {
				return nil, nil, bad("node %q: %s", n.ID, err)
			}
			n.parents[j] = p
		}
	}
	final := nodes[spec.Final]
	if final == nil {
		return nil, nil, bad("final node %q is not in the job", spec.Final)
	}
	for _, p := range spec.Partitions {
		if p < 0 || p >= final.Partitions {
			return nil, nil, bad("partition %d of %q, which has %d", p, final.ID, final.Partitions)
		}
	}
	if err := checkAcyclic(nodes); err != "" {
		return nil, nil, bad("%s", err)
	}
	return nodes, final, nil
}

func checkDep(n, p *nodeInfo, d Dep) string {
	switch d.Kind {
	case OneToOne:
		if p.Partitions != n.Partitions {
			return fmt.Sprintf("one-to-one dependency on %q with %d partitions, not %d", p.ID, p.Partitions, n.Partitions)
		}
	case Range:
		if d.Offset < 0 || d.Offset+p.Partitions > n.Partitions {
			return fmt.Sprintf("range dependency on %q: [%d, %d) outside %d partitions", p.ID, d.Offset, d.Offset+p.Partitions, n.Partitions)
		}
	case Groups:
		if len(d.Groups) != n.Partitions {
			return fmt.Sprintf("groups dependency on %q: %d groups for %d partitions", p.ID, len(d.Groups), n.Partitions)
		}
		for _, g := range d.Groups {
			for _, q := range g {
				if q < 0 || q >= p.Partitions {
					return fmt.Sprintf("groups dependency on %q: partition %d of %d", p.ID, q, p.Partitions)
				}
			}
		}
	case Shuffle:
		if d.ShuffleID < 0 {
			return fmt.Sprintf("shuffle dependency on %q has negative shuffle id %d", p.ID, d.ShuffleID)
		}
	default:
		return fmt.Sprintf("dependency on %q of unknown kind %v", p.ID, d.Kind)
	}
	return ""
}

func checkAcyclic(nodes map[NodeID]*nodeInfo) string {
	const (
		unseen = iota
		active
		done
	)
	state := make(map[*nodeInfo]int, len(nodes))
	var visit func(n *nodeInfo) string
	visit = func(n *nodeInfo) string {
		switch state[n] {
		case active:
			return fmt.Sprintf("dependency cycle through %q", n.ID)
		case done:
			return ""
		}
		state[n] = active
		for _, p := range n.parents {
			if err := visit(p); err != "" {
				return err
			}
		}
		state[n] = done
		return ""
	}
	for _, n := range nodes {
		if err := visit(n); err != "" {
			return err
		}
	}
	return ""
}

// parentPartitions lists the partitions of dep's parent that child
// partition p reads through a narrow dependency.
func parentPartitions(d *Dep, parent *nodeInfo, p int) []int {
	switch d.Kind {
	case OneToOne:
		return []int{p}
	case Range:
		if p >= d.Offset && p < d.Offset+parent.Partitions {
			return []int{p - d.Offset}
		}
	case Groups:
		return d.Groups[p]
	}
	return nil
}

// shuffleReads are the reduce partitions partition p of n reads (see
// TaskSet.ShuffleReads).
func shuffleReads(n *nodeInfo, p int) []ShuffleRead {
	type np struct {
		n *nodeInfo
		p int
	}
	var out []ShuffleRead
	seen := map[np]bool{}
	have := map[ShuffleRead]bool{}
	var walk func(n *nodeInfo, p int)
	walk = func(n *nodeInfo, p int) {
		if seen[np{n, p}] {
			return
		}
		seen[np{n, p}] = true
		for j := range n.Deps {
			d := &n.Deps[j]
			if d.Kind == Shuffle {
				if r := (ShuffleRead{d.ShuffleID, p}); !have[r] {
					have[r] = true
					out = append(out, r)
				}
				continue
			}
			for _, q := range parentPartitions(d, n.parents[j], p) {
				walk(n.parents[j], q)
			}
		}
	}
	walk(n, p)
	return out
}

// shuffleDeps returns the shuffle dependencies reachable from n through
// narrow dependencies (the boundaries of n's stage), with the reading node,
// in a deterministic order (depth first, dependency order), each once.
func shuffleDeps(n *nodeInfo) []shuffleRef {
	var out []shuffleRef
	seenNode := map[*nodeInfo]bool{}
	seenShuffle := map[int]bool{}
	var walk func(n *nodeInfo)
	walk = func(n *nodeInfo) {
		if seenNode[n] {
			return
		}
		seenNode[n] = true
		for j := range n.Deps {
			d := &n.Deps[j]
			if d.Kind == Shuffle {
				if !seenShuffle[d.ShuffleID] {
					seenShuffle[d.ShuffleID] = true
					out = append(out, shuffleRef{id: d.ShuffleID, reader: n, writer: n.parents[j]})
				}
				continue
			}
			walk(n.parents[j])
		}
	}
	walk(n)
	return out
}

type shuffleRef struct {
	id             int
	reader, writer *nodeInfo
}

// pipelineIndeterminate reports whether any node of n's pipeline is
// indeterminate.
func pipelineIndeterminate(n *nodeInfo) bool {
	seen := map[*nodeInfo]bool{}
	var walk func(n *nodeInfo) bool
	walk = func(n *nodeInfo) bool {
		if seen[n] {
			return false
		}
		seen[n] = true
		if n.Indeterminate {
			return true
		}
		for j := range n.Deps {
			if n.Deps[j].Kind != Shuffle && walk(n.parents[j]) {
				return true
			}
		}
		return false
	}
	return walk(n)
}
