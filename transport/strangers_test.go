package transport_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/transport"
)

const strangerToken = "0123456789abcdef0123456789abcdef-stranger"

// serveWithFront serves testServer behind a real auth.Front on a loopback
// listener until the test ends.
func serveWithFront(t *testing.T, cfg transport.HTTPConfig) (*transport.HTTP, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	front, err := auth.New(auth.Config{
		Tokens:      []auth.Token{{Name: "default", Secret: auth.NewSecret(strangerToken), Scopes: auth.FullScopes()}},
		Listener:    addr,
		ResourceURL: "http://" + addr + "/mcp",
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Guard, cfg.Auth = front.Guard, front.RequireBearer
	h := newHTTP(t, testServer(new(atomic.Int64)), cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = h.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done; h.Close() })
	return h, addr
}

// dialFrom dials addr from the loopback source address src.
func dialFrom(src, addr string) (net.Conn, error) {
	d := net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
	return d.Dial("tcp", addr)
}

// rawInitialize sends an authenticated initialize on c and reads the
// status line of the answer.
func rawInitialize(c net.Conn, br *bufio.Reader, addr string) (int, error) {
	_ = c.SetDeadline(time.Now().Add(3 * time.Second))
	defer c.SetDeadline(time.Time{})
	fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n%s", addr, strangerToken, len(initBody), initBody)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// TestStrangersAreBounded opens 500 unauthenticated slow connections from
// five loopback addresses (half trickling their headers, half announcing a
// 4 MiB body, sending 256 KiB of it and trickling the rest) and checks that the gateway keeps at most
// MaxStrangers of them, its heap grows by less than strangerHeapBound, and
// /health, a new authenticated call and an authenticated keep-alive
// connection opened before the flood all keep answering.
func TestStrangersAreBounded(t *testing.T) {
	const (
		conns             = 500
		maxStrangers      = 48
		strangerHeapBound = 4 << 20
	)
	h, addr := serveWithFront(t, transport.HTTPConfig{MaxStrangers: maxStrangers})

	// An authenticated connection opened before the flood is not a stranger.
	keep, err := dialFrom("127.0.0.1", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer keep.Close()
	keepR := bufio.NewReader(keep)
	if code, err := rawInitialize(keep, keepR, addr); err != nil || code != 200 {
		t.Fatalf("authenticated initialize before the flood: %d %v", code, err)
	}

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	pad := []byte(strings.Repeat(" ", 256<<10))
	var mu sync.Mutex
	var open []net.Conn
	for i := range conns {
		c, err := dialFrom(fmt.Sprintf("127.0.0.%d", 1+i%5), addr)
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		if i%2 == 0 {
			fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n", addr) // headers never end
		} else {
			fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{\"jsonrpc\":\"2.0\",",
				addr, 4<<20)
			// The first 256 KiB of the body: what a gateway that buffers
			// bodies before the bearer check would hold for each.
			_ = c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
			_, _ = c.Write(pad)
		}
		mu.Lock()
		open = append(open, c)
		mu.Unlock()
	}
	t.Cleanup(func() {
		for _, c := range open {
			c.Close()
		}
	})
	// Trickle a byte on every connection for a while, as slow clients do.
	stop := make(chan struct{})
	rounds := make(chan struct{}, 1)
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait)
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			for _, c := range open {
				_ = c.SetWriteDeadline(time.Now().Add(10 * time.Millisecond))
				_, _ = c.Write([]byte(" "))
			}
			select {
			case rounds <- struct{}{}:
			default:
			}
		}
	}()
	defer close(stop)
	for range 6 { // six rounds of trickling before the checks
		<-rounds
	}

	if n := h.StrangerCount(); n > maxStrangers {
		t.Errorf("%d strangers tracked, want at most %d", n, maxStrangers)
	}
	client := &http.Client{Timeout: 2 * time.Second}
	start := time.Now()
	resp, err := client.Get("http://" + addr + "/health")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("/health during the flood: %v %v", resp, err)
	}
	resp.Body.Close()
	healthTook := time.Since(start)
	start = time.Now()
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/mcp", strings.NewReader(initBody))
	req.Header.Set("Authorization", "Bearer "+strangerToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err = client.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("authenticated call during the flood: %v %v", resp, err)
	}
	resp.Body.Close()
	callTook := time.Since(start)
	if code, err := rawInitialize(keep, keepR, addr); err != nil || code != 200 {
		t.Errorf("keep-alive authenticated connection after the flood: %d %v (evicted as a stranger?)", code, err)
	}

	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	growth := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("%d slow strangers: heap %d → %d KiB (growth %d KiB), %d tracked, /health %v, authenticated call %v",
		conns, before.HeapAlloc>>10, after.HeapAlloc>>10, growth>>10, h.StrangerCount(), healthTook, callTook)
	if growth > strangerHeapBound {
		t.Errorf("heap grew %d bytes under %d strangers, bound %d", growth, conns, strangerHeapBound)
	}
}

// TestRouteBodiesAreBounded checks the cap and the read deadline on the
// bodies of extra routes, which are read before any bearer check.
func TestRouteBodiesAreBounded(t *testing.T) {
	var got atomic.Int64
	route := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.Add(int64(len(b)))
	})
	_, addr := serveWithFront(t, transport.HTTPConfig{MaxRouteBody: 1024, StrangerReadTimeout: 300 * time.Millisecond,
		Routes: map[string]http.Handler{"POST /extra": route}})

	tests := []struct {
		name   string
		body   string
		status int
	}{
		{"at the cap", strings.Repeat("x", 1024), 200},
		{"over the cap", strings.Repeat("x", 1025), http.StatusRequestEntityTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := http.Post("http://"+addr+"/extra", "text/plain", strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.status)
			}
		})
	}
	if got.Load() != 1024 {
		t.Errorf("route read %d bytes, want 1024 (only the body that fit)", got.Load())
	}

	// A body trickled slower than the deadline is cut off.
	c, err := dialFrom("127.0.0.1", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /extra HTTP/1.1\r\nHost: %s\r\nContent-Length: 100\r\n\r\nx", addr)
	// The server's deadline is 300ms; ours is far later, so a timeout
	// here means the server never cut the connection.
	_ = c.SetReadDeadline(time.Now().Add(time.Minute))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		t.Errorf("a trickled body held the connection until the client gave up: %v", err)
	case err == nil:
		resp.Body.Close()
		if resp.StatusCode < 400 {
			t.Errorf("a trickled body was accepted: %d", resp.StatusCode)
		}
	}
}

// TestRouteHandlerOutlivesTheBodyDeadline: the read deadline bounds the
// body only; a route handler that takes longer than it is not cancelled.
func TestRouteHandlerOutlivesTheBodyDeadline(t *testing.T) {
	route := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(500 * time.Millisecond):
			_, _ = io.WriteString(w, "finished")
		case <-r.Context().Done():
			http.Error(w, "cancelled", http.StatusServiceUnavailable)
		}
	})
	_, addr := serveWithFront(t, transport.HTTPConfig{StrangerReadTimeout: 100 * time.Millisecond,
		Routes: map[string]http.Handler{"POST /slow": route}})
	resp, err := http.Post("http://"+addr+"/slow", "text/plain", strings.NewReader("body"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(b) != "finished" {
		t.Errorf("slow route: %d %q", resp.StatusCode, b)
	}
}
