package transport_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"github.com/rigout/rigout/transport"
)

func TestFrameLimiter(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"under", "abc\ndef\n", 5, "abc\ndef\n"},
		{"exactly max", "abcde\nx\n", 5, "abcde\nx\n"},
		{"over", "abcdefgh\nok\n", 5, "abcde\x00\nok\n"},
		{"over without newline at EOF", "abcdefgh", 5, "abcde\x00\n"},
		{"last line without newline", "ab\ncd", 5, "ab\ncd"},
		{"several long", "1234567\n89\nabcdefg\n", 3, "123\x00\n89\nabc\x00\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, wrap := range []func(io.Reader) io.Reader{
				func(r io.Reader) io.Reader { return r },
				iotest.OneByteReader,
			} {
				b, err := io.ReadAll(transport.NewFrameLimiter(wrap(strings.NewReader(tt.in)), tt.max))
				if err != nil {
					t.Fatal(err)
				}
				if string(b) != tt.want {
					t.Errorf("got %q, want %q", b, tt.want)
				}
			}
		})
	}
}

// TestFrameLimiterBoundsMemory streams a 64 MiB line through the limiter
// and checks every line that comes out is within the cap.
func TestFrameLimiterBoundsMemory(t *testing.T) {
	const max = 4 << 20
	huge := io.MultiReader(
		io.LimitReader(infiniteA{}, 64<<20),
		strings.NewReader("\n{\"ok\":true}\n"),
	)
	sc := bufio.NewReader(transport.NewFrameLimiter(huge, max))
	var lines []int
	for {
		line, err := sc.ReadSlice('\n')
		n := len(line)
		for err == bufio.ErrBufferFull {
			var more []byte
			more, err = sc.ReadSlice('\n')
			n += len(more)
		}
		if n > 0 {
			lines = append(lines, n)
		}
		if err != nil {
			break
		}
	}
	if len(lines) != 2 || lines[0] != max+2 || lines[1] != len("{\"ok\":true}\n") {
		t.Errorf("line lengths = %v", lines)
	}
}

type infiniteA struct{}

func (infiniteA) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}

// TestStdioOversizedFrameKeepsServing sends an oversized message, then a
// ping, and expects a parse error followed by the ping's answer.
func TestStdioOversizedFrameKeepsServing(t *testing.T) {
	srv := testServer(new(atomic.Int64))
	big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 2000) + `"}}`
	in := strings.NewReader(big + "\n" + `{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n")
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go func() {
		done <- transport.ServeStdio(ctx, srv, io.MultiReader(in, blockUntil(ctx)), pw, transport.StdioConfig{MaxFrame: 1000})
		pw.Close()
	}()
	dec := json.NewDecoder(pr)
	var got []map[string]any
	for len(got) < 2 {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("decode after %d messages: %v", len(got), err)
		}
		got = append(got, m)
	}
	cancel()
	<-done
	first, _ := got[0]["error"].(map[string]any)
	if first == nil || first["code"] != float64(-32700) {
		t.Errorf("oversized frame answered %v, want a parse error", got[0])
	}
	if got[1]["id"] != float64(2) || got[1]["result"] == nil {
		t.Errorf("ping after the oversized frame answered %v", got[1])
	}
}

// blockUntil returns a reader that blocks until ctx is done, so the stdio
// server does not see EOF (which ends it) before it has answered.
func blockUntil(ctx context.Context) io.Reader {
	pr, pw := io.Pipe()
	go func() { <-ctx.Done(); pw.Close() }()
	return pr
}
