package transport

import (
	"io"
	"log/slog"
)

// NewFrameLimiter exposes the stdio frame limiter to tests.
func NewFrameLimiter(r io.Reader, max int) io.Reader {
	return newFrameLimiter(r, max, slog.New(slog.DiscardHandler))
}

// StrangerCount reports how many connections of Serve are tracked as
// strangers.
func (h *HTTP) StrangerCount() int { return h.strangers.count() }

// SessionCount reports how many protocol sessions owner holds.
func (h *HTTP) SessionCount(owner string) int { return h.sessions.count(owner) }
