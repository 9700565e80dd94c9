package transport

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"sync"
)

// strangers tracks the connections of [HTTP.Serve] that have not yet
// carried an authenticated MCP request, and bounds them: at most perAddr
// from one client address and at most total in all. A new connection over
// either bound closes the oldest stranger of that address (or of all), so
// a flood of slow strangers evicts itself and a newcomer, such as the
// real client's next connection, always gets its turn to authenticate.
//
// It is safe for concurrent use.
type strangers struct {
	perAddr, total int

	// mu protects the following.
	mu     sync.Mutex
	seq    uint64
	conns  map[net.Conn]stranger
	byAddr map[string]int
}

// stranger is one tracked connection: its address key and arrival order.
type stranger struct {
	addr string
	seq  uint64
}

func newStrangers(perAddr, total int) *strangers {
	return &strangers{perAddr: perAddr, total: total, conns: make(map[net.Conn]stranger), byAddr: make(map[string]int)}
}

// connState is the http.Server ConnState hook: a new connection is a
// stranger until [strangers.trust]; a closed or hijacked one is forgotten.
func (s *strangers) connState(c net.Conn, st http.ConnState) {
	switch st {
	case http.StateNew:
		for _, old := range s.add(c) {
			_ = old.Close()
		}
	case http.StateClosed, http.StateHijacked:
		s.forget(c)
	}
}

// add tracks c and returns the connections it evicts, already forgotten,
// for the caller to close outside the lock.
func (s *strangers) add(c net.Conn) []net.Conn {
	key := addrKey(c.RemoteAddr())
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	s.conns[c] = stranger{addr: key, seq: s.seq}
	s.byAddr[key]++
	var evicted []net.Conn
	for s.byAddr[key] > s.perAddr {
		evicted = append(evicted, s.evictOldest(key))
	}
	for len(s.conns) > s.total {
		evicted = append(evicted, s.evictOldest(""))
	}
	return evicted
}

// evictOldest forgets and returns the oldest stranger of addr, or of all
// addresses when addr is "". The caller holds mu and knows one exists.
func (s *strangers) evictOldest(addr string) net.Conn {
	var oldest net.Conn
	var min uint64
	for c, e := range s.conns {
		if (addr == "" || e.addr == addr) && (oldest == nil || e.seq < min) {
			oldest, min = c, e.seq
		}
	}
	s.forgetLocked(oldest)
	return oldest
}

func (s *strangers) forget(c net.Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forgetLocked(c)
}

func (s *strangers) forgetLocked(c net.Conn) {
	e, ok := s.conns[c]
	if !ok {
		return
	}
	delete(s.conns, c)
	if s.byAddr[e.addr]--; s.byAddr[e.addr] <= 0 {
		delete(s.byAddr, e.addr)
	}
}

// count returns how many strangers are tracked.
func (s *strangers) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// connKey is the context key under which [HTTP.Serve] puts each request's
// connection.
type connKey struct{}

// trust stops tracking the connection of a request that authenticated:
// eviction is for strangers only.
func (s *strangers) trust(ctx context.Context) {
	if c, ok := ctx.Value(connKey{}).(net.Conn); ok {
		s.forget(c)
	}
}

// addrKey is the client address connections are counted against: the IP,
// or for IPv6 its /64, which one host usually owns whole.
func addrKey(a net.Addr) string {
	if a == nil {
		return ""
	}
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return a.String()
	}
	ip := ap.Addr().Unmap()
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.String()
}
