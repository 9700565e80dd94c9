package federation

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
)

// errTooLarge ends a connection whose downstream sent an oversized message.
var errTooLarge = errors.New("federation: message over the size limit")

// lineLimit passes a downstream's stream on, failing it once a line (a
// stdio message, an SSE line, a JSON response body) runs past max bytes,
// so the reader above it never holds more than that of one message.
type lineLimit struct {
	r    io.Reader
	max  int
	run  int    // bytes since the last newline
	over func() // called once when the limit is passed
	err  error
}

func (l *lineLimit) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	n, err := l.r.Read(p)
	b := p[:n]
	for off := 0; off < n; {
		i := bytes.IndexByte(b[off:], '\n')
		seg := n - off
		if i >= 0 {
			seg = i
		}
		if l.run+seg > l.max {
			l.err = errTooLarge
			if l.over != nil {
				l.over()
			}
			return off + (l.max - l.run), l.err
		}
		if i < 0 {
			l.run += seg
			break
		}
		l.run = 0
		off += i + 1
	}
	return n, err
}

// limitedBody is an HTTP response body behind a lineLimit.
type limitedBody struct {
	*lineLimit
	c io.Closer
}

func (b limitedBody) Close() error { return b.c.Close() }

// limitTransport bounds every response body of a downstream HTTP server
// with a lineLimit.
type limitTransport struct {
	base http.RoundTripper
	max  int
	over func()
}

func (t limitTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	resp.Body = limitedBody{lineLimit: &lineLimit{r: resp.Body, max: t.max, over: t.over}, c: resp.Body}
	return resp, nil
}

// capResult cuts res to at most max bytes of content, counting text,
// image and audio data, embedded resources and structured content, and
// says so in a last text block. It reports whether anything was cut.
func capResult(res *mcp.CallToolResult, max int, server string) bool {
	left := max
	total := 0
	cut := false
	var kept []mcp.Content
	for _, c := range res.Content {
		switch v := c.(type) {
		case mcp.TextContent:
			total += len(v.Text)
			if len(v.Text) > left {
				v.Text = cutText(v.Text, left)
				cut = true
			}
			left -= len(v.Text)
			if v.Text != "" {
				kept = append(kept, v)
			}
			continue
		}
		b, _ := json.Marshal(c)
		total += len(b)
		if len(b) > left {
			cut = true
			continue
		}
		left -= len(b)
		kept = append(kept, c)
	}
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		total += len(b)
		if len(b) > left {
			res.StructuredContent = nil
			cut = true
		}
	}
	if !cut {
		return false
	}
	kept = append(kept, mcp.NewTextContent(fmt.Sprintf(
		"\n[result cut at %d bytes: downstream %s sent about %d; content over the cap was left out (structured content too, if it did not fit)]", max, server, total)))
	res.Content = kept
	return true
}

// cutText returns at most n bytes of s, not splitting a character.
func cutText(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
