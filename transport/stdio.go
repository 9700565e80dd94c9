package transport

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log"
	"log/slog"

	"github.com/mark3labs/mcp-go/server"

	"github.com/rigout/rigout/internal/callstream"
)

// DefaultMaxFrame bounds one stdio message and one HTTP request body: 4 MiB.
const DefaultMaxFrame = 4 << 20

// StdioConfig configures ServeStdio. The zero value is valid.
type StdioConfig struct {
	// MaxFrame is the longest message, in bytes, read from the client. A
	// longer line is cut there, answered with a JSON-RPC parse error, and
	// the rest of it discarded; the server keeps serving. If zero,
	// DefaultMaxFrame.
	MaxFrame int
	// Logger receives transport errors. If nil, they are discarded.
	Logger *slog.Logger
	// Context, if set, derives the context of every request, for example
	// to attach the principal "stdio".
	Context func(ctx context.Context) context.Context
}

// ServeStdio serves srv over in and out until in ends or ctx is done.
// Nothing but protocol messages is written to out: log to stderr.
//
// mcp-go keeps one stdio session per process, so a process serves at most
// one stdio stream at a time.
func ServeStdio(ctx context.Context, srv *server.MCPServer, in io.Reader, out io.Writer, cfg StdioConfig) error {
	if cfg.MaxFrame <= 0 {
		cfg.MaxFrame = DefaultMaxFrame
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := server.NewStdioServer(srv)
	s.SetErrorLogger(log.New(slogWriter{logger}, "", 0))
	// A call's notifications are written on out at once, ahead of its
	// result (see lineOut).
	lines := &lineOut{w: out}
	defer lines.end()
	s.SetContextFunc(func(ctx context.Context) context.Context {
		if cfg.Context != nil {
			ctx = cfg.Context(ctx)
		}
		return callstream.With(ctx, lines)
	})
	err := s.Listen(ctx, newFrameLimiter(in, cfg.MaxFrame, logger), lines)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// frameLimiter passes newline-delimited input through, cutting any line
// longer than max: the first max bytes are followed by a NUL byte and a
// newline, which makes the cut line invalid JSON (so the server answers it
// with a parse error), and the remainder of the line is dropped. Memory in
// the server's line reader therefore stays below max+2 bytes.
type frameLimiter struct {
	r       *bufio.Reader
	max     int
	logger  *slog.Logger
	lineLen int  // bytes of the current line passed through so far
	discard bool // dropping the rest of an oversized line
	pending []byte
}

func newFrameLimiter(r io.Reader, max int, logger *slog.Logger) *frameLimiter {
	return &frameLimiter{r: bufio.NewReaderSize(r, 64<<10), max: max, logger: logger}
}

func (f *frameLimiter) Read(p []byte) (int, error) {
	if len(f.pending) > 0 {
		n := copy(p, f.pending)
		f.pending = f.pending[n:]
		return n, nil
	}
	for {
		chunk, err := f.r.ReadSlice('\n')
		if len(chunk) == 0 && err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return 0, err
		}
		newline := len(chunk) > 0 && chunk[len(chunk)-1] == '\n'
		if f.discard {
			if newline {
				f.discard = false
				f.lineLen = 0
			}
			if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
				return 0, err
			}
			continue
		}
		room := f.max - f.lineLen
		if len(chunk) > room && !(newline && len(chunk)-1 <= room) {
			// The line is over the limit: pass what fits, then end it.
			f.logger.LogAttrs(context.Background(), slog.LevelWarn, "stdio message over the size limit; dropped",
				slog.Int("limit", f.max))
			f.pending = append(append(f.pending[:0], chunk[:room]...), 0, '\n')
			if newline {
				f.lineLen = 0
			} else {
				f.discard = true
			}
			n := copy(p, f.pending)
			f.pending = f.pending[n:]
			return n, nil
		}
		if newline {
			f.lineLen = 0
		} else {
			f.lineLen += len(chunk)
		}
		f.pending = append(f.pending[:0], chunk...)
		n := copy(p, f.pending)
		f.pending = f.pending[n:]
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) && len(f.pending) == 0 {
			return n, err
		}
		return n, nil
	}
}

// slogWriter adapts mcp-go's log.Logger output to slog.
type slogWriter struct{ l *slog.Logger }

func (w slogWriter) Write(p []byte) (int, error) {
	msg := string(p)
	if len(msg) > 0 && msg[len(msg)-1] == '\n' {
		msg = msg[:len(msg)-1]
	}
	w.l.LogAttrs(context.Background(), slog.LevelWarn, "mcp stdio", slog.String("detail", msg))
	return len(p), nil
}
