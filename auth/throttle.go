package auth

import (
	"container/list"
	"sync"
	"time"
)

// throttle counts failed credential attempts per client address in a fixed
// window. Its table is bounded: when full, the address that failed least
// recently is forgotten first.
type throttle struct {
	limit  int
	window time.Duration
	max    int

	// mu protects the following.
	mu      sync.Mutex
	entries map[string]*list.Element // of *throttleEntry
	order   *list.List               // least recently failed first
}

type throttleEntry struct {
	key   string
	start time.Time
	count int
}

func newThrottle(c ThrottleConfig) *throttle {
	return &throttle{
		limit:   c.Failures,
		window:  c.Window,
		max:     c.MaxAddresses,
		entries: make(map[string]*list.Element),
		order:   list.New(),
	}
}

// blocked reports whether key has used up its failures, and for how long.
func (t *throttle) blocked(key string, now time.Time) (time.Duration, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	el, ok := t.entries[key]
	if !ok {
		return 0, false
	}
	e := el.Value.(*throttleEntry)
	left := t.window - now.Sub(e.start)
	if left <= 0 || e.count < t.limit {
		return 0, false
	}
	return left, true
}

// fail counts one failure for key.
func (t *throttle) fail(key string, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if el, ok := t.entries[key]; ok {
		e := el.Value.(*throttleEntry)
		if now.Sub(e.start) >= t.window {
			e.start, e.count = now, 0
		}
		e.count++
		t.order.MoveToBack(el)
		return
	}
	// Forget expired entries at the front, then the oldest if still full.
	for front := t.order.Front(); front != nil; front = t.order.Front() {
		e := front.Value.(*throttleEntry)
		if now.Sub(e.start) < t.window && t.order.Len() < t.max {
			break
		}
		t.order.Remove(front)
		delete(t.entries, e.key)
	}
	t.entries[key] = t.order.PushBack(&throttleEntry{key: key, start: now, count: 1})
}

// size reports the number of addresses tracked (for tests).
func (t *throttle) size() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.entries)
}
