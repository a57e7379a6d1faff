package placement

import (
	"fmt"
	"math"
	"strings"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/framework/resource"
)

// AgentOffers is the offers one agent has in hand, their resources
// together (one ACCEPT takes them all).
type AgentOffers struct {
	AgentID, Host string
	Resources     mesos.Resources
	// ExecutorRunning: the offers list the agent's executor of ours and
	// the backend has launched it, so its cpus and memory are already out.
	ExecutorRunning bool
	// ShareTaken: a task that carries the executor's share (ShortCPUs)
	// runs there already.
	ShareTaken bool
}

// SlotRequest is what the fine backend knows about the offers it holds.
type SlotRequest struct {
	Agents    []AgentOffers // sorted by agent id: the order slots are dealt in
	TaskCPUs  int
	ExecCPUs  float64 // flint.mesos.mesosExecutor.cores of a new executor
	ExecMemMB float64 // its memory
	// ExecPorts is how many ports a new executor takes (its listening
	// servers' port mappings); AgentSlots.ExecutorPorts names them.
	ExecPorts int
	// CoresMax (+Inf: none) over HeldCPUs: the cpus of live tasks and of
	// running executors.
	CoresMax, HeldCPUs float64
	// Backoff, by agent id: no launch there before (launches lost before
	// their executor came up; launchbackoff), at Now.
	Backoff map[string]time.Time
	Now     time.Time
}

// AgentSlots is the plan for one agent.
type AgentSlots struct {
	AgentID, Host string
	// Slots is how many tasks the agent's offers take now.
	Slots int
	// NewExecutor: the first task starts the executor, whose own cpus and
	// memory come out of the offers first.
	NewExecutor bool
	// Fits is how many slots the offers hold before the cores cap.
	Fits int
	// ShortCPUs, when not zero, is the cpus of the agent's last slot:
	// flint.task.cpus less the executor's own share, so that the
	// executor's cpus cost a fraction of one slot, not a whole one. Its
	// task runs in the executor's container beside the executor, whose
	// cpus it may use (one Mesos container's cpu share is the sum).
	ShortCPUs float64
	// Filter says why the agent gets no (more) slots: Used when Slots > 0
	// and nothing held any back.
	Filter Filtered

	// What to take from the offers, exactly: a new executor's pieces
	// (Executor, with the ports among them), then each slot's in the order
	// tasks take them (Slot: Fits of them; the last has ShortCPUs cpus
	// when ShortCPUs is not zero). The backend launches with them as they
	// are, without checking fit again.
	Executor      mesos.Resources
	ExecutorPorts []uint64
	Slot          []mesos.Resources
}

// SlotPlan is the slots of every agent with offers in hand.
type SlotPlan struct{ Agents []AgentSlots }

// Slots works out each agent's executor and task slots: a new executor's
// own cpus and memory come out of the offers first; then flint.cores.max
// cuts the slots one per agent in turn (a new executor's cpus charged with
// its first slot), so that live tasks, running executors and the slots
// offered now stay within it.
func Slots(r SlotRequest) SlotPlan {
	p := SlotPlan{Agents: make([]AgentSlots, len(r.Agents))}
	for i, a := range r.Agents {
		p.Agents[i] = size(&r, a)
	}
	if math.IsInf(r.CoresMax, 1) {
		return p
	}
	room := r.CoresMax - r.HeldCPUs
	allowed := make([]int, len(p.Agents))
	for progress := true; progress; {
		progress = false
		for i, s := range p.Agents {
			if allowed[i] >= s.Slots {
				continue
			}
			cost := float64(r.TaskCPUs)
			if s.NewExecutor && allowed[i] == 0 {
				cost += r.ExecCPUs
			}
			if cost > room+eps {
				continue
			}
			room -= cost
			allowed[i]++
			progress = true
		}
	}
	for i := range p.Agents {
		s := &p.Agents[i]
		if allowed[i] < s.Slots {
			s.Slots = allowed[i]
			s.Filter = Filtered{AgentID: s.AgentID, Host: s.Host, Reason: CoresCapReached,
				Detail: fmt.Sprintf("flint.cores.max=%d reached (%s cpus held by tasks and executors)", int(r.CoresMax), CPUString(r.HeldCPUs))}
		}
	}
	return p
}

func size(r *SlotRequest, a AgentOffers) AgentSlots {
	s := AgentSlots{AgentID: a.AgentID, Host: a.Host}
	cpus, mem := resource.Amount(a.Resources, resource.CPUs), resource.Amount(a.Resources, resource.Mem)
	rest := a.Resources
	unfit := func(reason Reason, detail string) AgentSlots {
		s.Filter = Filtered{AgentID: a.AgentID, Host: a.Host, Reason: reason, Detail: detail}
		return s
	}
	checks := Checks{Backoff: r.Backoff, Now: r.Now}
	if reason, why := feasible(&Offer{AgentID: a.AgentID, Host: a.Host}, checks.chain()...); reason != Used {
		return unfit(reason, why)
	}
	if !a.ExecutorRunning {
		var short []string
		reason := Used
		if need := r.ExecCPUs + float64(r.TaskCPUs); cpus+eps < need {
			short = append(short, fmt.Sprintf("cpus %s < %s needed (flint.task.cpus + flint.mesos.mesosExecutor.cores)", CPUString(cpus), CPUString(need)))
			reason = CPUsShort
		}
		if mem+eps < r.ExecMemMB {
			short = append(short, fmt.Sprintf("mem %g MiB < %g MiB needed (flint.executor.memory + flint.mesos.executor.memoryOverhead)", mem, r.ExecMemMB))
			if reason == CPUsShort {
				reason = ResourcesShort
			} else {
				reason = MemShort
			}
		}
		if len(short) > 0 {
			return unfit(reason, strings.Join(short, ", "))
		}
		ask := resource.Ask{resource.ScalarNeed(resource.CPUs, r.ExecCPUs), resource.ScalarNeed(resource.Mem, r.ExecMemMB),
			resource.RangeNeed(resource.Ports, r.ExecPorts)}
		if short := resource.Short(rest, ask[2:]); len(short) > 0 {
			return unfit(OtherShort, shortDetail(short, "executor port mappings"))
		}
		taken, left, ok := resource.Take(rest, ask)
		if !ok {
			return unfit(ResourcesShort, fmt.Sprintf("resources %s cannot cover the executor (cpus %g, mem %g MiB)", rest.String(), r.ExecCPUs, r.ExecMemMB))
		}
		rest, s.Executor, s.ExecutorPorts = left, taken, resource.Values(taken, resource.Ports)
		cpus -= r.ExecCPUs
		s.NewExecutor = true
	}
	s.Slots = int(math.Floor(cpus+eps)) / r.TaskCPUs
	if !a.ShareTaken && r.ExecCPUs > 0 && r.ExecCPUs < float64(r.TaskCPUs) {
		// One slot may take the rest of the cpus beside the executor's
		// share: flint.task.cpus less what the executor's share took.
		if rest := cpus - float64(s.Slots*r.TaskCPUs); rest+eps >= float64(r.TaskCPUs)-r.ExecCPUs {
			s.Slots++
			s.ShortCPUs = math.Round(rest*1000) / 1000
		}
	}
	s.Fits = s.Slots
	if s.Slots == 0 {
		return unfit(CPUsShort, fmt.Sprintf("cpus %s < %d needed (flint.task.cpus) beside the running executor", CPUString(cpus), r.TaskCPUs))
	}
	for i := range s.Fits {
		want := float64(r.TaskCPUs)
		if i == s.Fits-1 && s.ShortCPUs > 0 {
			want = s.ShortCPUs
		}
		taken, left, ok := resource.Take(rest, resource.Ask{resource.ScalarNeed(resource.CPUs, want)})
		if !ok { // not reached: the slots were counted from these cpus
			s.Slots, s.Fits, s.ShortCPUs = i, i, 0
			break
		}
		rest = left
		s.Slot = append(s.Slot, taken)
	}
	return s
}
