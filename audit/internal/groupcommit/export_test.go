package groupcommit

import "time"

// WaitState waits until ok holds of c's queue length and closed flag:
// tests order themselves by the committer's state, not by sleeping.
func WaitState[T any](c *Committer[T], ok func(queued int, closed bool) bool) {
	for {
		c.mu.Lock()
		done := ok(len(c.queue), c.closed)
		c.mu.Unlock()
		if done {
			return
		}
		time.Sleep(time.Millisecond)
	}
}
