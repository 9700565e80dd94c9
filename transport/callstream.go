package transport

import (
	"bytes"
	"io"
	"mime"
	"net/http"
	"sync"

	"github.com/rigout/rigout/internal/callstream"
)

// callResponse is the response writer of one POST on the MCP endpoint, and
// the callstream.Writer of the tool call it carries: the call's
// notifications are written on the POST's own response, ahead of its
// result, instead of through mcp-go's session queue (which the client's GET
// stream and other POSTs also read, and whose POST forwarder can drop a
// notification it dequeued as the result is written).
//
// The first message Send writes starts the response as a server-sent event
// stream. mcp-go's own writes pass through unchanged, serialised with
// Send's (each of mcp-go's SSE events is one Write), except a JSON body it
// writes after Send started the stream: that body, the JSON-RPC response,
// is held and written as the stream's last event by end. mcp-go's headers
// are collected in a map of their own and copied when mcp-go starts the
// response itself, so Send never races mcp-go on the header map.
type callResponse struct {
	w       http.ResponseWriter
	flusher http.Flusher // nil when w cannot stream: Send refuses

	// mu protects the following.
	mu       sync.Mutex
	header   http.Header  // what mcp-go sets
	started  bool         // the status line has been written
	sse      bool         // the response is an event stream
	streamed bool         // Send started it
	held     bytes.Buffer // mcp-go's JSON body after Send started the stream
	hold     bool         // mcp-go wrote a JSON response after Send started the stream
	ended    bool         // the handler has returned: nothing more is written
}

var _ callstream.Writer = (*callResponse)(nil)

func newCallResponse(w http.ResponseWriter) *callResponse {
	c := &callResponse{w: w, header: http.Header{}}
	c.flusher, _ = w.(http.Flusher)
	return c
}

// Header returns the headers mcp-go sets; they are sent when it starts the
// response.
func (c *callResponse) Header() http.Header { return c.header }

// WriteHeader starts the response, unless Send has: then a non-SSE
// response from mcp-go is held for end to write as an event.
func (c *callResponse) WriteHeader(status int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writeHeaderLocked(status)
}

func (c *callResponse) writeHeaderLocked(status int) {
	if c.ended {
		return
	}
	if c.started {
		if c.streamed && !isEventStream(c.header.Get("Content-Type")) {
			c.hold = true
		}
		return
	}
	dst := c.w.Header()
	for k, v := range c.header {
		dst[k] = v
	}
	c.started = true
	c.sse = isEventStream(c.header.Get("Content-Type"))
	c.w.WriteHeader(status)
}

// Write writes mcp-go's body, or holds it (see WriteHeader).
func (c *callResponse) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return 0, callstream.ErrEnded
	}
	if !c.started {
		c.writeHeaderLocked(http.StatusOK)
	}
	if c.hold {
		return c.held.Write(p)
	}
	return c.w.Write(p)
}

// Flush sends what mcp-go wrote.
func (c *callResponse) Flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started && !c.hold && !c.ended && c.flusher != nil {
		c.flusher.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection (mcp-go sets
// write deadlines through it).
func (c *callResponse) Unwrap() http.ResponseWriter { return c.w }

// Send writes msg as an event on the response, starting it as an event
// stream if nothing has been written yet.
func (c *callResponse) Send(msg []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.ended, c.hold, c.flusher == nil:
		return callstream.ErrEnded
	case !c.started:
		h := c.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		c.w.WriteHeader(http.StatusOK)
		c.started, c.sse, c.streamed = true, true, true
	case !c.sse:
		return callstream.ErrEnded // mcp-go answered in JSON: that was the response
	}
	if err := writeEvent(c.w, msg); err != nil {
		return err
	}
	c.flusher.Flush()
	return nil
}

// end writes a held response as the stream's last event. After it nothing
// is written: the handler that owns w has returned.
func (c *callResponse) end() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return
	}
	c.ended = true
	if c.hold && c.held.Len() > 0 {
		_ = writeEvent(c.w, bytes.TrimSpace(c.held.Bytes()))
		if c.flusher != nil {
			c.flusher.Flush()
		}
	}
}

// writeEvent writes one server-sent event carrying msg, which holds no
// newline (encoding/json escapes them in strings).
func writeEvent(w io.Writer, msg []byte) error {
	b := make([]byte, 0, len(msg)+24)
	b = append(b, "event: message\ndata: "...)
	b = append(b, msg...)
	b = append(b, "\n\n"...)
	_, err := w.Write(b)
	return err
}

func isEventStream(contentType string) bool {
	mt, _, _ := mime.ParseMediaType(contentType)
	return mt == "text/event-stream"
}

// lineOut is stdio's output, and the callstream.Writer of every call it
// serves: a call's notifications are written on it at once, ahead of the
// result, instead of through mcp-go's notification goroutine, which may
// write them after the result. Writes are whole lines: a partial line
// from mcp-go is kept until its newline arrives, so no message is cut by
// another.
type lineOut struct {
	// mu protects the following.
	mu      sync.Mutex
	w       io.Writer
	pending []byte // the start of a line not yet ended
	ended   bool
}

var _ callstream.Writer = (*lineOut)(nil)

func (l *lineOut) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := bytes.LastIndexByte(p, '\n')
	if i < 0 {
		l.pending = append(l.pending, p...)
		return len(p), nil
	}
	out := p[:i+1]
	if len(l.pending) > 0 {
		out = append(l.pending, out...)
		l.pending = nil
	}
	if _, err := l.w.Write(out); err != nil {
		return 0, err
	}
	l.pending = append(l.pending, p[i+1:]...)
	return len(p), nil
}

// Send writes msg as one line.
func (l *lineOut) Send(msg []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended {
		return callstream.ErrEnded
	}
	_, err := l.w.Write(append(msg[:len(msg):len(msg)], '\n'))
	return err
}

func (l *lineOut) end() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ended = true
}
