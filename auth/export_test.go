package auth

import "time"

// Internals reached by the external tests.
var ParseBearer = parseBearer

// ThrottleSize reports how many addresses the Front's throttle tracks.
func (f *Front) ThrottleSize() int { return f.throttle.size() }

// NewThrottleForTest exposes the throttle table for its bound test.
func NewThrottleForTest(c ThrottleConfig) (fail func(key string, now time.Time), blocked func(key string, now time.Time) (time.Duration, bool), size func() int) {
	t := newThrottle(c)
	return t.fail, t.blocked, t.size
}

// MatchGlob exposes the glob matcher.
var MatchGlob = matchGlob

// MatchRedirect exposes redirect URI matching.
var MatchRedirect = matchRedirect
