package remote

// Connections returns the number of live pooled SSH connections per
// configured host name, for metrics. Hosts with none are absent. The names
// are the inventory's, never a caller's text.
func (r *Router) Connections() map[string]int {
	p := r.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	n := map[string]int{}
	for _, g := range p.groups {
		for _, c := range g.conns {
			if !c.retired {
				n[c.host]++
			}
		}
	}
	return n
}
