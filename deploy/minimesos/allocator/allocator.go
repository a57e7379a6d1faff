package allocator

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/roles"
)

// ErrInvalidConfig is returned by New for an unusable Config.
var ErrInvalidConfig = errors.New("allocator: invalid config")

const (
	// DefaultRefuse is the filter duration used when a refusal gives none or a negative one
	// (Mesos' Filters.refuse_seconds default).
	DefaultRefuse = 5 * time.Second
	// MaxRefuse caps filter durations, as Mesos does.
	MaxRefuse = 365 * 24 * time.Hour
)

// Config tunes an Allocator.
type Config struct {
	// Weights are roles' weights (default 1). Role "*" is the default role.
	Weights map[string]float64
	// MaxOutstandingOffers caps, per framework, offers not yet answered (see
	// Allocator.OfferAnswered); 0 = unlimited.
	MaxOutstandingOffers int
	// DefaultRefuseSeconds applies when a filter gives a negative duration; 0 means
	// DefaultRefuse (5s). Durations are capped at MaxRefuse (365 days).
	DefaultRefuseSeconds float64
}

// FrameworkInfo is what the allocator needs to know about a framework.
type FrameworkInfo struct {
	ID        string
	Roles     []string // the framework's roles; empty means the default role "*"
	MultiRole bool     // MULTI_ROLE capability
	GPUAware  bool     // GPU_RESOURCES capability: only such frameworks get agents with gpus
}

// Offer is one allocation decision: all of Resources on AgentID go to FrameworkID for Role.
// Every resource carries allocation_info.role = Role (as in Mesos); the master strips it for
// frameworks without MULTI_ROLE. Resources are the caller's to keep (a deep copy).
type Offer struct {
	FrameworkID string
	AgentID     string
	Hostname    string
	Role        string
	Resources   mesos.Resources
}

// Allocator is Mesos' hierarchical DRF allocator as a pure state machine: no goroutines, no
// clock, no I/O, not safe for concurrent use. See the package documentation.
type Allocator struct {
	cfg           Config
	defaultRefuse time.Duration
	rng           *rand.Rand

	agents     map[string]*agent
	order      []*agent // registration order; shuffled copies drive rounds
	frameworks map[string]*framework
	roles      map[string]*role
	placed     map[string]map[string]struct{} // framework id → agents holding its records

	kinds     map[string]int // scalar resource name → index in qvecs
	kindNames []string
	totalQ    qvec // cluster total (all agents)
	allocQ    qvec // offered or used, all agents

	filters      int // installed filters (expired ones are dropped at each round)
	hierarchical bool

	// per-round scratch
	roleHeap shareHeap
	scratch  []*entry
}

type agent struct {
	id, hostname string
	total        mesos.Resources
	totalQ       qvec
	available    mesos.Resources // total − Σ alloc
	alloc        map[allocKey]mesos.Resources
	active       bool
	gpus         bool
	pos          int // index in Allocator.order
}

type allocKey struct{ fw, role string }

type framework struct {
	info        FrameworkInfo
	roles       []string // sorted, deduplicated
	active      bool
	suppressed  map[string]bool
	outstanding int
	alloc       map[string]qvec     // by role
	filters     map[string][]filter // by agent
	entries     map[string]*entry   // by role, valid during a round
}

type filter struct {
	role    string
	res     mesos.Resources
	expires time.Time
}

type role struct {
	name       string
	weight     float64
	alloc      qvec
	records    int // allocation records (agent, framework) in this role
	frameworks map[string]*framework
	// per round
	entry  entry
	fwHeap shareHeap
}

// New returns an empty allocator. rng orders agents in every round; a fixed seed makes the
// allocator's decisions reproducible.
func New(cfg Config, rng *rand.Rand) (*Allocator, error) {
	var errs []error
	if rng == nil {
		errs = append(errs, errors.New("nil rng"))
	}
	if cfg.MaxOutstandingOffers < 0 {
		errs = append(errs, fmt.Errorf("MaxOutstandingOffers %d < 0", cfg.MaxOutstandingOffers))
	}
	if s := cfg.DefaultRefuseSeconds; s < 0 || math.IsNaN(s) || math.IsInf(s, 0) {
		errs = append(errs, fmt.Errorf("DefaultRefuseSeconds %v must be a finite value ≥ 0", s))
	}
	for name, w := range cfg.Weights {
		if _, err := roles.Parse(name); err != nil {
			errs = append(errs, fmt.Errorf("weight for role %q: %w", name, err))
		}
		if !(w > 0) || math.IsInf(w, 0) {
			errs = append(errs, fmt.Errorf("weight %v for role %q must be finite and > 0", w, name))
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, errors.Join(errs...))
	}
	d := DefaultRefuse
	if cfg.DefaultRefuseSeconds > 0 {
		d = min(time.Duration(cfg.DefaultRefuseSeconds*float64(time.Second)), MaxRefuse)
	}
	return &Allocator{
		cfg:           cfg,
		defaultRefuse: d,
		rng:           rng,
		agents:        map[string]*agent{},
		frameworks:    map[string]*framework{},
		roles:         map[string]*role{},
		placed:        map[string]map[string]struct{}{},
		kinds:         map[string]int{},
	}, nil
}

func (a *Allocator) role(name string) *role {
	r := a.roles[name]
	if r == nil {
		w := 1.0
		if v, ok := a.cfg.Weights[name]; ok {
			w = v
		}
		r = &role{name: name, weight: w, frameworks: map[string]*framework{}}
		r.entry = entry{name: name, idx: -1, role: r}
		a.roles[name] = r
		if strings.ContainsRune(name, '/') {
			a.hierarchical = true
		}
	}
	return r
}

// dropRoleIfUnused forgets a role nobody uses any more.
func (a *Allocator) dropRoleIfUnused(r *role) {
	if len(r.frameworks) == 0 && r.records == 0 {
		delete(a.roles, r.name)
	}
}

func normRoles(rs []string) []string {
	if len(rs) == 0 {
		return []string{mesos.DefaultRole}
	}
	out := slices.Clone(rs)
	slices.Sort(out)
	return slices.Compact(out)
}

// track records res (owned by the callee from now on) as allocated on ag to fwID in roleName.
func (a *Allocator) track(ag *agent, fwID, roleName string, res mesos.Resources) {
	if len(res) == 0 {
		return
	}
	key := allocKey{fwID, roleName}
	cur, ok := ag.alloc[key]
	if !ok {
		a.role(roleName).records++
	}
	for i := range res {
		addOwned(&cur, res[i])
	}
	ag.alloc[key] = cur
	q := a.quantities(res)
	a.allocQ.add(q, 1)
	a.roles[roleName].alloc.add(q, 1)
	if fw := a.frameworks[fwID]; fw != nil {
		fq := fw.alloc[roleName]
		fq.add(q, 1)
		fw.alloc[roleName] = fq
	}
	p := a.placed[fwID]
	if p == nil {
		p = map[string]struct{}{}
		a.placed[fwID] = p
	}
	p[ag.id] = struct{}{}
}

// untrack returns res (contained in the record) from fwID's record in roleName to ag's
// available resources.
func (a *Allocator) untrack(ag *agent, fwID, roleName string, res mesos.Resources) {
	key := allocKey{fwID, roleName}
	cur, ok := ag.alloc[key]
	if !ok || len(res) == 0 {
		return
	}
	subtractAll(&cur, res)
	addAll(&ag.available, res)
	q := a.quantities(res)
	a.allocQ.add(q, -1)
	r := a.roles[roleName]
	r.alloc.add(q, -1)
	if fw := a.frameworks[fwID]; fw != nil {
		fq := fw.alloc[roleName]
		fq.add(q, -1)
		fw.alloc[roleName] = fq
	}
	if len(cur) > 0 {
		ag.alloc[key] = cur
		return
	}
	delete(ag.alloc, key)
	r.records--
	a.dropRoleIfUnused(r)
	if !a.hasRecords(ag, fwID) {
		delete(a.placed[fwID], ag.id)
		if len(a.placed[fwID]) == 0 {
			delete(a.placed, fwID)
		}
	}
}

func (a *Allocator) hasRecords(ag *agent, fwID string) bool {
	for k := range ag.alloc {
		if k.fw == fwID {
			return true
		}
	}
	return false
}

// recordKeys lists fwID's records on ag in a deterministic order.
func recordKeys(ag *agent, fwID string) []allocKey {
	var ks []allocKey
	for k := range ag.alloc {
		if fwID == "" || k.fw == fwID {
			ks = append(ks, k)
		}
	}
	slices.SortFunc(ks, func(x, y allocKey) int {
		if x.fw != y.fw {
			if x.fw < y.fw {
				return -1
			}
			return 1
		}
		if x.role < y.role {
			return -1
		}
		if x.role > y.role {
			return 1
		}
		return 0
	})
	return ks
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
