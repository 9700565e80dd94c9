package sessions

// Stats counts what a Manager holds right now, across every principal.
type Stats struct {
	// Running is the number of background processes still running.
	Running int
	// Terminals is the number of open terminal sessions.
	Terminals int
}

// Stats returns how many background processes are running and how many
// terminal sessions are open, for metrics. It holds the manager's lock
// only to read two counters and walk the terminal table.
func (m *Manager) Stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := Stats{Running: m.runningAll}
	for _, t := range m.terms {
		if t.ready {
			s.Terminals++
		}
	}
	return s
}
