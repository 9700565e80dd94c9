package groupcommit_test

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rigout/rigout/audit/internal/groupcommit"
)

type row struct{ seq int64 }

func TestConcurrentCallers(t *testing.T) {
	var seq atomic.Int64
	var inCommit atomic.Int32
	var batches, maxSeen atomic.Int64
	c := groupcommit.New(groupcommit.Config[row]{MaxBatch: 8, Linger: 200 * time.Microsecond, Window: time.Millisecond,
		Commit: func(b []*row) error {
			if inCommit.Add(1) != 1 {
				t.Error("two commits at once")
			}
			defer inCommit.Add(-1)
			if len(b) > 8 || len(b) == 0 {
				t.Errorf("batch of %d", len(b))
			}
			maxSeen.Store(max(maxSeen.Load(), int64(len(b))))
			batches.Add(1)
			time.Sleep(100 * time.Microsecond) // an fsync
			for _, r := range b {
				r.seq = seq.Add(1)
			}
			return nil
		}})
	const callers, each = 32, 50
	seen := make([]int64, 0, callers*each)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for range each {
				var r row
				if err := c.Do(&r); err != nil {
					t.Error(err)
					return
				}
				if r.seq == 0 {
					t.Error("Do returned before its row was committed")
				}
				mu.Lock()
				seen = append(seen, r.seq)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	c.Close()
	if len(seen) != callers*each || seq.Load() != callers*each {
		t.Fatalf("%d answers, %d rows committed; want %d", len(seen), seq.Load(), callers*each)
	}
	if batches.Load() >= callers*each || maxSeen.Load() < 2 {
		t.Errorf("%d commits for %d rows (largest %d): no grouping", batches.Load(), callers*each, maxSeen.Load())
	}
	if err := c.Do(&row{}); !errors.Is(err, groupcommit.ErrClosed) {
		t.Errorf("Do after Close = %v", err)
	}
}

func TestErrorReachesEveryCallerOfTheBatch(t *testing.T) {
	boom := errors.New("disk full")
	release := make(chan struct{})
	var calls atomic.Int32
	c := groupcommit.New(groupcommit.Config[row]{MaxBatch: 16, Commit: func(b []*row) error {
		if calls.Add(1) == 1 {
			<-release // hold the first commit so the others queue behind it
			return nil
		}
		return boom
	}})
	first := make(chan error)
	go func() { first <- c.Do(&row{}) }()
	for calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	errs := make(chan error, 5)
	for range 5 {
		go func() { errs <- c.Do(&row{}) }()
	}
	groupcommit.WaitState(c, func(queued int, _ bool) bool { return queued == 5 })
	close(release)
	if err := <-first; err != nil {
		t.Errorf("first = %v", err)
	}
	for range 5 {
		if err := <-errs; !errors.Is(err, boom) {
			t.Errorf("queued caller got %v, want the second commit's error", err)
		}
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("%d commits, want 2 (the queued five share one)", n)
	}
}

func TestCloseWaitsForQueuedRows(t *testing.T) {
	var committed atomic.Int32
	release := make(chan struct{})
	c := groupcommit.New(groupcommit.Config[row]{MaxBatch: 1, Commit: func(b []*row) error {
		<-release
		committed.Add(int32(len(b)))
		return nil
	}})
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			if err := c.Do(&row{}); err != nil {
				t.Error(err)
			}
		})
	}
	// One row is in its commit, the other two queued behind it.
	groupcommit.WaitState(c, func(queued int, _ bool) bool { return queued == 2 })
	atClose := make(chan int32)
	go func() { c.Close(); atClose <- committed.Load() }()
	groupcommit.WaitState(c, func(_ int, closed bool) bool { return closed })
	close(release)
	if n := <-atClose; n != 3 {
		t.Errorf("%d rows committed when Close returned, want 3", n)
	}
	wg.Wait()
}

func Example() {
	var seq int64
	c := groupcommit.New(groupcommit.Config[row]{MaxBatch: 256, Commit: func(b []*row) error {
		for _, r := range b { // one transaction, one fsync
			seq++
			r.seq = seq
		}
		return nil
	}})
	defer c.Close()
	var r row
	if err := c.Do(&r); err != nil {
		fmt.Println(err)
	}
	fmt.Println(r.seq)
	// Output: 1
}

func TestPanickingCommitReleasesTheLead(t *testing.T) {
	c := groupcommit.New(groupcommit.Config[row]{MaxBatch: 4, Commit: func(b []*row) error {
		if b[0].seq == 1 {
			panic("bug")
		}
		return nil
	}})
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the panic did not reach the leader")
			}
		}()
		c.Do(&row{seq: 1})
	}()
	if err := c.Do(&row{}); err != nil {
		t.Errorf("Do after a panicked commit = %v", err)
	}
	c.Close()
}
