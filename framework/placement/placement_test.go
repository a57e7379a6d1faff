package placement

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/framework/placement/constraints"
	"github.com/flint-mesos/flint/framework/resource"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// TestGolden runs testdata/*.txt: `offer` and `agent` lines collect
// offers; `executors` and `slots` plan them (and clear them) and print the
// plan. Regenerate with -rewrite and read the diff.
//
//	offer id=O agent=A host=H cpus=N mem=N [gpus=N] [ports=B-E,...] [attrs=k:v,...] [executors=E,...]
//	executors task-cpus=N mem=N [exec-cores=N] [gpus-max=N] [ports=N] [cores-max=N] [held=N] [limit=N] [live=N]
//	          [constraints=SPEC] [excluded=A,...] [backoff=A,...] [prefs=H:N,...] [running=H,...]
//	          [wait=D] [since=D] [at=D] [stopping]
//	agent id=A host=H cpus=N mem=N [ports=B-E,...] [running] [share-taken]
//	slots task-cpus=N exec-cpus=N exec-mem=N [exec-ports=N] [cores-max=N] [held=N]
//
// A launch prints the ports its plan names; a slot plan prints a new
// executor's ports.
func TestGolden(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		var offers []Offer
		var agents []AgentOffers
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			a := args(d)
			switch d.Cmd {
			case "offer":
				o := Offer{ID: a.s("id"), AgentID: a.s("agent"), Host: a.s("host"), Resources: offered(t, a)}
				for _, kv := range a.list("attrs") {
					k, v, _ := strings.Cut(kv, ":")
					o.Attributes = append(o.Attributes, mesos.Attribute{Name: k, Type: mesos.TEXT, Text: &mesos.Value_Text{Value: v}})
				}
				o.Executors = a.list("executors")
				offers = append(offers, o)
				return ""
			case "agent":
				_, running := a["running"]
				_, shared := a["share-taken"]
				agents = append(agents, AgentOffers{AgentID: a.s("id"), Host: a.s("host"), Resources: offered(t, a),
					ExecutorRunning: running, ShareTaken: shared})
				return ""
			case "executors":
				r := executorRequest(t, a, offers)
				offers = nil
				return renderExecutors(Executors(r))
			case "slots":
				r := SlotRequest{Agents: agents, TaskCPUs: a.i(t, "task-cpus"), ExecCPUs: a.f(t, "exec-cpus"), ExecMemMB: a.f(t, "exec-mem"), ExecPorts: a.i(t, "exec-ports"),
					CoresMax: math.Inf(1), HeldCPUs: a.f(t, "held")}
				if _, ok := a["cores-max"]; ok {
					r.CoresMax = a.f(t, "cores-max")
				}
				agents = nil
				return renderSlots(Slots(r))
			}
			t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
			return ""
		})
	})
}

type argMap map[string]string

// offered is the resources of an offer or agent line: cpus, mem, gpus
// (when not 0) and ports ranges.
func offered(t *testing.T, a argMap) mesos.Resources {
	rs := mesos.Resources{resource.ScalarResource(resource.CPUs, a.f(t, "cpus")), resource.ScalarResource(resource.Mem, a.f(t, "mem"))}
	if g := a.f(t, "gpus"); g != 0 {
		rs = append(rs, resource.ScalarResource(resource.GPUs, g))
	}
	var bounds []uint64
	for _, rg := range a.list("ports") {
		b, e, _ := strings.Cut(rg, "-")
		for _, v := range []string{b, e} {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			bounds = append(bounds, n)
		}
	}
	if len(bounds) > 0 {
		rs = append(rs, resource.RangeResource(resource.Ports, bounds...))
	}
	return rs
}

func args(d *datadriven.TestData) argMap {
	m := argMap{}
	for _, a := range d.CmdArgs {
		m[a.Key] = strings.Join(a.Vals, ",")
	}
	return m
}

func (m argMap) s(k string) string { return m[k] }
func (m argMap) list(k string) []string {
	if m[k] == "" {
		return nil
	}
	return strings.Split(m[k], ",")
}
func (m argMap) f(t *testing.T, k string) float64 {
	if m[k] == "" {
		return 0
	}
	v, err := strconv.ParseFloat(m[k], 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
func (m argMap) i(t *testing.T, k string) int { return int(m.f(t, k)) }
func (m argMap) d(t *testing.T, k string) time.Duration {
	if m[k] == "" {
		return 0
	}
	v, err := time.ParseDuration(m[k])
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func executorRequest(t *testing.T, a argMap, offers []Offer) ExecutorRequest {
	r := ExecutorRequest{Offers: offers, Now: t0.Add(a.d(t, "at")), ExecutorCores: a.i(t, "exec-cores"), TaskCPUs: a.i(t, "task-cpus"),
		MemMB: a.f(t, "mem"), GPUsMax: a.i(t, "gpus-max"), Ports: a.i(t, "ports"), CoresMax: math.MaxInt, CoresHeld: a.i(t, "held"), Limit: -1, Live: a.i(t, "live"),
		LocalityWait: a.d(t, "wait"), Excluded: map[string]Exclusion{}, Backoff: map[string]time.Time{},
		HostPrefs: map[string]int{}, HostsRunning: map[string]bool{}}
	_, r.Stopping = a["stopping"]
	if _, ok := a["cores-max"]; ok {
		r.CoresMax = a.i(t, "cores-max")
	}
	if _, ok := a["limit"]; ok {
		r.Limit = a.i(t, "limit")
	}
	if _, ok := a["since"]; ok {
		r.LocalitySince = t0.Add(a.d(t, "since"))
	}
	if c := a["constraints"]; c != "" {
		cs, err := constraints.Parse(c)
		if err != nil {
			t.Fatal(err)
		}
		r.Constraints = cs
	}
	for _, ag := range a.list("excluded") {
		r.Excluded[ag] = Exclusion{Until: r.Now.Add(time.Minute), Failures: 2, Last: "Command exited with status 1"}
	}
	for _, ag := range a.list("backoff") {
		r.Backoff[ag] = r.Now.Add(time.Second)
	}
	for _, hp := range a.list("prefs") {
		h, n, _ := strings.Cut(hp, ":")
		c, err := strconv.Atoi(n)
		if err != nil {
			t.Fatal(err)
		}
		r.HostPrefs[h] = c
	}
	for _, h := range a.list("running") {
		r.HostsRunning[h] = true
	}
	return r
}

func renderExecutors(p ExecutorPlan) string {
	var b strings.Builder
	for _, l := range p.Launches {
		fmt.Fprintf(&b, "launch offer=%s host=%s cores=%d mem=%g gpus=%d", l.OfferID, l.Host, l.Cores, l.MemMB, l.GPUs)
		if len(l.Ports) > 0 {
			fmt.Fprintf(&b, " ports=%v", l.Ports)
		}
		b.WriteString("\n")
	}
	for _, f := range p.Declined {
		fmt.Fprintf(&b, "decline offer=%s: %s", f.OfferID, f.Reason)
		if f.Detail != "" {
			fmt.Fprintf(&b, " (%s)", f.Detail)
		}
		b.WriteString("\n")
	}
	if !p.LocalitySince.IsZero() {
		fmt.Fprintf(&b, "locality hold since +%s, %d offer(s) deferred\n", p.LocalitySince.Sub(t0), p.Deferred)
	}
	for _, s := range Summary(p.Filtered) {
		fmt.Fprintf(&b, "unfit: %s\n", s)
	}
	if b.Len() == 0 {
		return "(nothing)\n"
	}
	return b.String()
}

func renderSlots(p SlotPlan) string {
	var b strings.Builder
	for _, s := range p.Agents {
		fmt.Fprintf(&b, "agent %s: %d slot(s)", s.AgentID, s.Slots)
		if s.NewExecutor {
			b.WriteString(", new executor")
		}
		if len(s.ExecutorPorts) > 0 {
			fmt.Fprintf(&b, " with ports %v", s.ExecutorPorts)
		}
		if s.ShortCPUs > 0 {
			fmt.Fprintf(&b, ", the last with %s cpus beside the executor", CPUString(s.ShortCPUs))
		}
		if s.Filter.Reason != Used {
			fmt.Fprintf(&b, "; %s (%s)", s.Filter.Reason, s.Filter.Detail)
		}
		b.WriteString("\n")
	}
	if b.Len() == 0 {
		return "(nothing)\n"
	}
	return b.String()
}
