package exec

import (
	"io"
	"slices"
	"sync"
)

// Capture is an io.Writer that keeps at most max bytes of a stream: all of
// it when it fits, otherwise its first half and its last half, so that
// memory stays bounded however much a command prints and both the start of
// the output and the error at its end survive. Local and the SSH runners
// capture every output stream with one (NewCapture), and Output returns
// what it kept. It is safe for concurrent use.
type Capture struct {
	max      int
	stream   Stream
	onOutput func(Stream, []byte)
	bufs     *sync.Pool     // of *[]byte copy buffers, shared by a runner's captures; may be nil
	in       io.WriteCloser // Command.Scrub's filter in front of store; may be nil
	closeIn  sync.Once

	// mu protects the following.
	mu    sync.Mutex
	buf   []byte // the whole stream while it fits; then its head
	tail  []byte // ring buffer of the last bytes once the stream overflowed
	arr   []byte // once overflowed: the one array holding head, then tail
	w     int    // next write position in tail
	full  bool   // the ring has wrapped at least once
	total int64
}

func newCapture(max int, stream Stream, onOutput func(Stream, []byte)) *Capture {
	if max <= 0 {
		max = DefaultMaxOutput
	}
	return &Capture{max: max, stream: stream, onOutput: onOutput}
}

// NewCapture returns the capture of one stream of cmd, behind
// cmd.Scrub when it is set.
func NewCapture(cmd *Command, stream Stream) *Capture {
	c := newCapture(cmd.MaxOutput, stream, cmd.OnOutput)
	if cmd.Scrub != nil {
		c.in = cmd.Scrub(storeWriter{c})
	}
	return c
}

// storeWriter is the capture's own store, the writer behind a Scrub filter.
type storeWriter struct{ c *Capture }

func (w storeWriter) Write(p []byte) (int, error) { return w.c.store(p) }

// copyBufSize is the size of the buffers ReadFrom copies through.
const copyBufSize = 32 << 10

// ReadFrom copies r into the capture until EOF. os/exec's copying
// goroutine calls it, so that the copy buffer comes from the runner's pool
// instead of being allocated afresh for every stream of every command.
func (c *Capture) ReadFrom(r io.Reader) (int64, error) {
	var bp *[]byte
	if c.bufs != nil {
		bp, _ = c.bufs.Get().(*[]byte)
	}
	if bp == nil {
		b := make([]byte, copyBufSize)
		bp = &b
	}
	if c.bufs != nil {
		defer c.bufs.Put(bp)
	}
	buf := *bp
	var total int64
	for {
		n, err := r.Read(buf)
		if n > 0 {
			c.Write(buf[:n])
			total += int64(n)
		}
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// Write never fails: output beyond the cap is counted and dropped.
func (c *Capture) Write(p []byte) (int, error) {
	if c.in != nil {
		c.in.Write(p)
		return len(p), nil
	}
	return c.store(p)
}

// store keeps p, calling onOutput first.
func (c *Capture) store(p []byte) (int, error) {
	n := len(p)
	if c.onOutput != nil {
		c.onOutput(c.stream, p)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total += int64(len(p))
	if c.tail == nil {
		need := len(c.buf) + len(p)
		if need > cap(c.buf) && (need > smallOutput || need > c.max) && cap(c.buf) < c.max {
			// A stream this long is likely to reach the cap: allocate it
			// once, so that head and tail later share this one array.
			nb := make([]byte, len(c.buf), c.max)
			copy(nb, c.buf)
			c.buf = nb
		}
		if need <= c.max {
			c.buf = append(c.buf, p...)
			return n, nil
		}
		// Overflow: the first half stays as the head; the second half of
		// the array becomes the tail ring, already holding what followed
		// the head.
		head := c.max / 2
		if len(c.buf) < head {
			k := head - len(c.buf)
			c.buf = append(c.buf, p[:k]...)
			p = p[k:]
		}
		c.arr = c.buf[:c.max:c.max]
		c.tail = c.buf[head:c.max:c.max]
		c.w = len(c.buf) - head
		if c.w == len(c.tail) {
			c.w, c.full = 0, true
		}
		c.buf = c.buf[:head:head]
	}
	c.ringWrite(p)
	return n, nil
}

// smallOutput is how long a stream may grow by append before its buffer is
// allocated at the full cap.
const smallOutput = 64 << 10

func (c *Capture) ringWrite(p []byte) {
	n := len(c.tail)
	if len(p) >= n {
		copy(c.tail, p[len(p)-n:])
		c.w = 0
		c.full = true
		return
	}
	k := copy(c.tail[c.w:], p)
	if k < len(p) {
		copy(c.tail, p[k:])
		c.full = true
	}
	c.w = (c.w + len(p)) % n
	if c.w == 0 {
		c.full = true
	}
}

// Output flushes the Scrub filter, if any, and returns what was kept. It
// is called once the stream has ended. Head and tail share one array (see
// store), so the ring is rotated into order in place rather than copied:
// the kept output is held once, however long the stream was. Calling it
// again returns the same.
func (c *Capture) Output() Output {
	if c.in != nil {
		c.closeIn.Do(func() { c.in.Close() })
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tail == nil {
		return Output{Data: c.buf, Total: c.total}
	}
	head := len(c.buf)
	var data []byte
	if c.full {
		// tail[w:] is the oldest part: rotate it to the front.
		slices.Reverse(c.tail[:c.w])
		slices.Reverse(c.tail[c.w:])
		slices.Reverse(c.tail)
		c.w = 0
		data = c.arr
	} else {
		data = c.arr[:head+c.w]
	}
	return Output{
		Data:    data,
		Total:   c.total,
		Dropped: c.total - int64(len(data)),
		Head:    head,
	}
}
