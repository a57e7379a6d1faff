package allocator

// Stats is a snapshot for metrics endpoints.
type Stats struct {
	Agents, ActiveAgents         int
	Frameworks, ActiveFrameworks int
	Roles                        int
	// Total and Allocated (offered or used) scalar quantities by resource name.
	Total, Allocated map[string]float64
	// Filters counts installed refusal filters (expired ones go at the next round).
	Filters int
	// OutstandingOffers counts offers made and not yet answered, over all frameworks.
	OutstandingOffers int
}

// Stats returns current counts and quantities.
func (a *Allocator) Stats() Stats {
	s := Stats{
		Agents:     len(a.agents),
		Frameworks: len(a.frameworks),
		Roles:      len(a.roles),
		Total:      map[string]float64{},
		Allocated:  map[string]float64{},
		Filters:    a.filters,
	}
	for _, ag := range a.agents {
		if ag.active {
			s.ActiveAgents++
		}
	}
	for _, f := range a.frameworks {
		if f.active {
			s.ActiveFrameworks++
		}
		s.OutstandingOffers += f.outstanding
	}
	for i, name := range a.kindNames {
		if i < len(a.totalQ) && a.totalQ[i] != 0 {
			s.Total[name] = a.totalQ[i]
		}
		if i < len(a.allocQ) && a.allocQ[i] != 0 {
			s.Allocated[name] = a.allocQ[i]
		}
	}
	return s
}
