package scheduler

import (
	"time"
)

// registerOffers learns executors, hosts and racks from offers and
// recomputes locality levels when something new appeared.
func (s *TaskScheduler) registerOffers(offers []WorkerOffer) {
	changed := false
	for _, o := range offers {
		if e := s.execs[o.ExecutorID]; e != nil {
			continue
		}
		changed = true
		h := s.hosts[o.Host]
		if h == nil {
			h = &hostInfo{rack: o.Rack}
			s.hosts[o.Host] = h
			if o.Rack != "" {
				s.racks[o.Rack]++
			}
		}
		h.execs = append(h.execs, o.ExecutorID)
		s.execs[o.ExecutorID] = &executorInfo{host: o.Host, rack: h.rack}
		if h.rack != "" && s.hostRack[o.Host] != h.rack {
			s.hostRack[o.Host] = h.rack
			for _, m := range s.ordered {
				m.learnRack(o.Host, h.rack)
			}
		}
	}
	if changed {
		for _, m := range s.ordered {
			if !m.zombie {
				m.computeLevels(s)
			}
		}
	}
}

// ResourceOffers assigns pending tasks to offers (Spark's resourceOffers).
// Offers are shuffled, offers of excluded executors and nodes dropped; then
// the best task set by pool order takes one task at a time, trying its
// locality levels from most local, passing round-robin over the offers, and
// the order is re-ranked after every launch so FAIR shares hold within a
// call. Each offer yields at most Cores/TaskCPUs launches.
func (s *TaskScheduler) ResourceOffers(offers []WorkerOffer, now time.Time) []Launch {
	if s.health != nil {
		s.health.expire(now)
	}
	s.registerOffers(offers)
	s.prepareOffers(offers, now)
	root := s.buildCallHeaps(now)
	if len(root) == 0 || len(s.live) == 0 {
		s.finishCall(root, now, false)
		return nil
	}
	capHint := 0
	for _, oi := range s.live {
		capHint += s.free[oi] / s.cfg.TaskCPUs
	}
	out := make([]Launch, 0, min(capHint, s.pendingTotal()))
	liveSlots := len(s.live)
	for len(root) > 0 && liveSlots > 0 {
		p := root[0]
		m := p.heap[0]
		oi, ok := s.launchOne(m, offers, now, &out)
		if !ok {
			if p.heap = popTop(p.heap, p.setLess); len(p.heap) == 0 {
				root = popTop(root, poolLess)
			}
			continue
		}
		if s.free[oi] < s.cfg.TaskCPUs {
			liveSlots--
		}
		if p.mode == FAIR {
			siftDown(p.heap, 0, p.setLess)
		}
		if s.cfg.Mode == FAIR {
			siftDown(root, 0, poolLess)
		}
	}
	s.finishCall(root, now, len(out) > 0)
	return out
}

func (s *TaskScheduler) pendingTotal() int {
	n := 0
	for _, m := range s.ordered {
		if !m.zombie {
			n += m.pendingCount[Any] + len(m.speculatable)
		}
	}
	return n
}

// prepareOffers fills offerOrder (shuffled, excluded dropped), free and live.
func (s *TaskScheduler) prepareOffers(offers []WorkerOffer, now time.Time) {
	s.offerOrder = s.offerOrder[:0]
	s.live = s.live[:0]
	s.free = s.free[:0]
	maxCores, excluded := 0, 0
	for i, o := range offers {
		s.free = append(s.free, o.Cores)
		if s.health != nil && s.health.excluded(o.ExecutorID, o.Host) {
			excluded++
			continue
		}
		maxCores = max(maxCores, o.Cores)
		s.offerOrder = append(s.offerOrder, int32(i))
	}
	if s.rng != nil {
		s.rng.Shuffle(len(s.offerOrder), func(i, j int) {
			s.offerOrder[i], s.offerOrder[j] = s.offerOrder[j], s.offerOrder[i]
		})
	}
	for _, oi := range s.offerOrder {
		if offers[oi].Cores >= s.cfg.TaskCPUs {
			s.live = append(s.live, oi)
		}
	}
	if len(offers) > 0 {
		s.sawOffers = true
		s.lastOfferAt = now
		s.lastMaxCores = maxCores
		s.lastOffers, s.lastExcludedOffers = len(offers), excluded
	}
}

// buildCallHeaps returns the root heap of pools whose heaps hold the task
// sets that may launch something in this call.
func (s *TaskScheduler) buildCallHeaps(now time.Time) []*pool {
	pools := s.poolOrder
	if s.cfg.Mode == FIFO {
		pools = []*pool{s.fifo}
	}
	var root []*pool
	for _, p := range pools {
		p.heap = p.heap[:0]
		for _, m := range p.sets {
			if m.zombie {
				continue
			}
			m.offeredAt, m.starved, m.launchedInCall = now, false, false
			m.callLevel, m.cand, m.pos, m.w = -1, m.cand[:0], 0, 0
			if m.pendingCount[Any] > 0 || m.hasSpeculatable() {
				p.heap = append(p.heap, m)
			}
		}
		if len(p.heap) > 0 {
			heapify(p.heap, p.setLess)
			root = append(root, p)
		}
	}
	heapify(root, poolLess)
	return root
}

// launchOne launches one task of m, continuing m's round-robin pass over the
// offers at its current level. It returns false when m can launch nothing
// more in this call: an offer that yields nothing at a level is dropped for
// that level, as later passes cannot do better within the same call.
func (s *TaskScheduler) launchOne(m *taskSetManager, offers []WorkerOffer, now time.Time, out *[]Launch) (int32, bool) {
	cpus := s.cfg.TaskCPUs
	for {
		if m.pos == len(m.cand) {
			launchedInPass := m.w > 0
			m.cand, m.pos, m.w = m.cand[:m.w], 0, 0
			if !launchedInPass || m.callLevel < 0 {
				if m.callLevel++; m.callLevel >= len(m.levels) {
					return 0, false
				}
				m.cand = s.refillCandidates(m)
			}
			continue
		}
		oi := m.cand[m.pos]
		m.pos++
		if s.free[oi] < cpus {
			continue
		}
		o := &offers[oi]
		if m.excl != nil && m.excl.setExcluded(o.ExecutorID, o.Host) {
			continue
		}
		if s.resourceOffer(m, o, m.levels[m.callLevel], now, out) {
			s.free[oi] -= cpus
			m.cand[m.w] = oi
			m.w++
			return oi, true
		}
	}
}

// refillCandidates lists the offers that still have room, compacting live.
func (s *TaskScheduler) refillCandidates(m *taskSetManager) []int32 {
	cand := m.cand[:0]
	w := 0
	for _, oi := range s.live {
		if s.free[oi] >= s.cfg.TaskCPUs {
			s.live[w] = oi
			w++
			cand = append(cand, oi)
		}
	}
	s.live = s.live[:w]
	return cand
}

// resourceOffer is Spark's TaskSetManager.resourceOffer for one offer.
func (s *TaskScheduler) resourceOffer(m *taskSetManager, o *WorkerOffer, max Level, now time.Time, out *[]Launch) bool {
	allowed := max
	if max != NoPref {
		allowed = min(m.allowedLevel(now), max)
	}
	rack := s.hostRack[o.Host]
	i, lvl, spec := m.dequeueTask(s, o.ExecutorID, o.Host, rack, allowed)
	if i < 0 {
		if allowed < max {
			m.offersRejectedL = true
		}
		return false
	}
	s.nextTID++
	tid := s.nextTID
	att := m.attempts[i]
	if !spec {
		m.adjustPending(i, -1)
	}
	m.copies[i]++
	m.flags[i] &^= fSpeculative
	m.recordAttempt(i, tid)
	m.running++
	m.pool.running++
	m.launchedInCall = true
	if e := s.execs[o.ExecutorID]; e != nil {
		e.running++
	}
	s.running[tid] = attempt{m: m, index: i, attempt: att, speculative: spec, locality: lvl,
		exec: o.ExecutorID, host: o.Host, launched: now}
	*out = append(*out, Launch{TaskID: tid, TaskSetID: m.ts.ID, Index: int(i), Attempt: int(att),
		ExecutorID: o.ExecutorID, Host: o.Host, Locality: lvl, Speculative: spec, CPUs: s.cfg.TaskCPUs})
	if max != NoPref {
		m.curLevel = m.levelIndex(lvl)
		m.lastLaunch = now
	}
	return true
}

// finishCall records explain data and unschedulable task sets.
func (s *TaskScheduler) finishCall(root []*pool, now time.Time, launched bool) {
	for _, p := range root {
		for _, m := range p.heap {
			m.starved = true
		}
	}
	if s.health == nil {
		return
	}
	if launched {
		for _, m := range s.ordered {
			m.unschedExpiry = time.Time{}
		}
		return
	}
	for _, m := range s.ordered {
		if m.zombie || m.launchedInCall || !m.unschedExpiry.IsZero() || m.pendingCount[Any] == 0 {
			continue
		}
		if i := m.lastPending(); i >= 0 && s.completelyExcluded(m, i) {
			m.unschedExpiry = now.Add(s.cfg.Exclude.UnschedulableTimeout)
			m.unschedIndex = i
		}
	}
}

// lastPending is the pending index nearest the top of the "all" list.
func (m *taskSetManager) lastPending() int32 {
	for j := len(m.all) - 1; j >= 0; j-- {
		if m.isPending(m.all[j]) {
			return m.all[j]
		}
	}
	return -1
}
