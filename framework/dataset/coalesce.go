package dataset

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/flint-mesos/flint/framework/dagscheduler"
	"github.com/flint-mesos/flint/framework/scheduler"
)

// coalesceBalanceSlack is Spark's DefaultPartitionCoalescer balanceSlack:
// a parent partition goes to a group on its preferred host unless some
// group has at least 10% of the parent partitions fewer.
const coalesceBalanceSlack = 0.10

// coalesceSeed seeds the coalescer's random choices (Spark's is 7919): a
// fixed seed, so every process groups the same parents alike.
const coalesceSeed = 7919

// Coalesce reduces the number of partitions to n without a shuffle, as
// Spark's coalesce(n) with its DefaultPartitionCoalescer. When no parent
// partition has a preferred host, new partition i reads parent
// partitions [i·m/n, (i+1)·m/n) of the m (10 to 3: [0 1 2] [3 4 5]
// [6 7 8 9]). When some have — file splits on a host, ParallelizeWithHosts,
// or anything computed from them through narrow operations — parents are
// grouped by preferred host: one group per distinct host first (more
// groups, when n exceeds the hosts, on the hosts of randomly chosen
// parents), then each remaining parent joins the least loaded group on
// one of its hosts unless a group elsewhere has 10% of the m parents
// fewer, and each new partition prefers its group's host. The result may
// have fewer than n partitions only when groups stay empty, as Spark's.
// n ≤ 0 or n ≥ m keeps the m partitions: as they are when none has a
// preferred host, else one per group as above (each preferring its
// host, possibly in another order), as Spark's.
//
// Preferred hosts are the ones the graph knows when it is built (file
// splits' and ParallelizeWithHosts'); where cached partitions live is
// known only as actions run, so, unlike Spark's, the grouping ignores
// it. The groups are drawn from a fixed seed, so every process builds
// the same ones; they are not Spark's draws for the same input.
func Coalesce[T any](ds Dataset[T], n int) Dataset[T] {
	m := ds.n.parts
	if n <= 0 || n >= m {
		n = m
	}
	prefs := make([][]string, m)
	for p := range prefs {
		prefs[p] = staticHosts(ds.n, p, 0)
	}
	groups, hosts := coalesceGroups(prefs, n)
	out := newNode(ds.n.b, "coalesce", len(groups), []node{ds.n},
		[]dagscheduler.Dep{{Kind: dagscheduler.Groups, Parent: ds.n.id, Groups: groups}},
		func(tc *taskContext, p int, emit func([]T) error) error {
			for _, q := range groups[p] {
				if err := ds.n.run(tc, q, emit); err != nil {
					return err
				}
			}
			return nil
		})
	if hosts != nil {
		out.n.preferred = make([][]scheduler.Location, len(hosts))
		for i, h := range hosts {
			out.n.preferred[i] = []scheduler.Location{{Host: h}}
		}
	}
	return out
}

// rangeGroups is Spark's grouping without locality: group i holds
// [i·m/n, (i+1)·m/n).
func rangeGroups(m, n int) [][]int {
	groups := make([][]int, n)
	for i := range groups {
		for q := i * m / n; q < (i+1)*m/n; q++ {
			groups[i] = append(groups[i], q)
		}
	}
	return groups
}

// staticHosts is where partition p of n prefers to run as far as the
// graph tells when it is built: its own preferred hosts, else those of
// the first parent partition (through narrow dependencies) that has some,
// as Spark's getPreferredLocs walks narrow dependencies.
func staticHosts(n node, p, depth int) []string {
	in := n.info()
	if in.preferred != nil && len(in.preferred[p]) > 0 {
		var hs []string
		for _, l := range in.preferred[p] {
			hs = append(hs, l.Host)
		}
		return hs
	}
	if depth > 1000 {
		return nil
	}
	for j, d := range in.deps {
		var pps []int
		switch d.Kind {
		case dagscheduler.OneToOne:
			pps = []int{p}
		case dagscheduler.Range:
			if p >= d.Offset && p < d.Offset+in.parents[j].info().parts {
				pps = []int{p - d.Offset}
			}
		case dagscheduler.Groups:
			pps = d.Groups[p]
		}
		for _, pp := range pps {
			if hs := staticHosts(in.parents[j], pp, depth+1); len(hs) > 0 {
				return hs
			}
		}
	}
	return nil
}

// coalesceGroup is one new partition: its preferred host and the parent
// partitions it reads, in the order they joined.
type coalesceGroup struct {
	host  string
	parts []int
}

// hostPart is a parent partition and one of its preferred hosts.
type hostPart struct {
	host string
	part int
}

// coalesceGroups groups the parent partitions whose preferred hosts are
// prefs into at most target groups, as Spark's DefaultPartitionCoalescer
// (setupGroups, throwBalls, pickBin): it returns each non-empty group's
// parents and, when any parent has a preferred host, each group's host
// (nil hosts: the range grouping).
func coalesceGroups(prefs [][]string, target int) ([][]int, []string) {
	m := len(prefs)
	var withHosts []hostPart // each partition's first host, then second, then third
	var without []int
	for x := range 3 {
		for p, hs := range prefs {
			if len(hs) > x {
				withHosts = append(withHosts, hostPart{hs[x], p})
			}
		}
	}
	for p, hs := range prefs {
		if len(hs) == 0 {
			without = append(without, p)
		}
	}
	k := min(m, target)
	if len(withHosts) == 0 {
		return rangeGroups(m, k), nil
	}
	c := &coalescer{prefs: prefs, assigned: make([]bool, m), byHost: map[string][]*coalesceGroup{},
		rnd: rand.New(rand.NewPCG(coalesceSeed, 0))}
	c.setup(k, withHosts)
	c.fillEmpty(withHosts, without)
	slack := int(coalesceBalanceSlack * float64(m))
	for p := range m {
		if !c.assigned[p] {
			g := c.pickBin(p, slack)
			g.parts = append(g.parts, p)
		}
	}
	var groups [][]int
	var hosts []string
	for _, g := range c.groups {
		if len(g.parts) > 0 {
			groups = append(groups, g.parts)
			hosts = append(hosts, g.host)
		}
	}
	return groups, hosts
}

type coalescer struct {
	prefs    [][]string
	assigned []bool
	groups   []*coalesceGroup
	byHost   map[string][]*coalesceGroup
	rnd      *rand.Rand
}

func (c *coalescer) add(p int, g *coalesceGroup) {
	if !c.assigned[p] {
		g.parts = append(g.parts, p)
		c.assigned[p] = true
	}
}

// setup creates k groups: one per distinct host among the first
// 2·(k·ln k + k + ½) (host, partition) pairs (the coupon collector's
// bound for seeing most hosts), then, while fewer than k, one on the host
// of a randomly chosen pair; each starts with its pair's partition when
// that is not placed yet.
func (c *coalescer) setup(k int, withHosts []hostPart) {
	coupons := 2 * int(math.Log(float64(k))*float64(k)+float64(k)+0.5)
	look := min(coupons, len(withHosts))
	for tries := 0; len(c.groups) < k && tries < look; tries++ {
		hp := withHosts[tries]
		if _, ok := c.byHost[hp.host]; ok {
			continue
		}
		g := &coalesceGroup{host: hp.host}
		c.groups = append(c.groups, g)
		c.byHost[hp.host] = []*coalesceGroup{g}
		c.add(hp.part, g)
	}
	for len(c.groups) < k {
		hp := withHosts[c.rnd.IntN(len(withHosts))]
		g := &coalesceGroup{host: hp.host}
		c.groups = append(c.groups, g)
		c.byHost[hp.host] = append(c.byHost[hp.host], g)
		c.add(hp.part, g)
	}
}

// fillEmpty gives every group still empty one partition, from those with
// hosts first, so the result has the partitions asked for.
func (c *coalescer) fillEmpty(withHosts []hostPart, without []int) {
	i, j := 0, 0
	for _, g := range c.groups {
		for len(g.parts) == 0 && i < len(withHosts) {
			c.add(withHosts[i].part, g)
			i++
		}
		for len(g.parts) == 0 && j < len(without) {
			c.add(without[j], g)
			j++
		}
	}
}

// pickBin is the group for partition p: the least loaded group on one of
// p's hosts, unless the lesser of two random groups has slack fewer
// partitions (the power of two choices).
func (c *coalescer) pickBin(p, slack int) *coalesceGroup {
	var pref *coalesceGroup
	for _, h := range c.prefs[p] {
		for _, g := range c.byHost[h] {
			if pref == nil || len(g.parts) < len(pref.parts) {
				pref = g
			}
		}
	}
	r1, r2 := c.groups[c.rnd.IntN(len(c.groups))], c.groups[c.rnd.IntN(len(c.groups))]
	least := r2
	if len(r1.parts) < len(r2.parts) {
		least = r1
	}
	if pref == nil || len(least.parts)+slack <= len(pref.parts) {
		return least
	}
	return pref
}

// ParallelizeWithHosts is one partition per record of xs, partition i
// preferring the hosts hosts[i] (Spark's makeRDD with location
// preferences): tasks computing it, and Coalesce grouping it, favour
// those hosts. hosts must have one entry per record (nil or empty for no
// preference); otherwise the next action fails. Like Parallelize, xs and
// hosts must come from the job's arguments or deterministic code.
func ParallelizeWithHosts[T any](b *Builder, xs []T, hosts [][]string) Dataset[T] {
	if len(hosts) != len(xs) {
		b.fail(fmt.Errorf("dataset: ParallelizeWithHosts: %d host lists for %d records", len(hosts), len(xs)))
		hosts = make([][]string, len(xs))
	}
	ds := newNode[T](b, "parallelize", len(xs), nil, nil, func(tc *taskContext, p int, emit func([]T) error) error {
		return emit(xs[p : p+1])
	})
	for p, hs := range hosts {
		if len(hs) == 0 {
			continue
		}
		if ds.n.preferred == nil {
			ds.n.preferred = make([][]scheduler.Location, len(xs))
		}
		for _, h := range hs {
			ds.n.preferred[p] = append(ds.n.preferred[p], scheduler.Location{Host: h})
		}
	}
	ds.n.data = digestOf(xs, hosts)
	return ds
}
