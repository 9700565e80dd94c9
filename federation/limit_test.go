package federation_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/federation"
	"github.com/rigout/rigout/rigouttest"
)

// TestLargeResultsAreCapped: a result over MaxResult is cut with a marker
// that says so; a 50 MiB message, over MaxMessage, fails its call clearly
// over stdio and over HTTP without the gateway reading it whole (the bytes
// it allocates meanwhile stay far below the message), other downstreams
// answer meanwhile, and the stdio downstream is restarted and serves again.
func TestLargeResultsAreCapped(t *testing.T) {
	s := stdioServer("a", t.TempDir())
	s.MaxResult, s.MaxMessage = 64<<10, 4<<20
	s.Timeout = 30 * time.Second
	web := federation.Server{Name: "web", URL: startHTTPProcess(t, "s3cret-down-token"), Token: "DOWN_TOKEN",
		MaxResult: 64 << 10, MaxMessage: 4 << 20, Timeout: 30 * time.Second}
	other := stdioServer("b", t.TempDir())
	fl := stdioServer("fl", t.TempDir())
	fl.Env["FEDTEST_DOWNSTREAM"] = "flood"
	fl.MaxMessage, fl.Timeout = 4<<20, 30*time.Second
	l := rigouttest.OpenLedger(t)
	gw := rigouttest.New(t, rigout.Config{Audit: l})
	// A ping slower than the test's default: a downstream busy writing
	// 50 MiB does not answer one, and the limit is what is tested here.
	fed, err := federation.New(federation.Config{
		Servers:         []federation.Server{s, web, other, fl},
		UnsafeNoSandbox: true,
		Ping:            time.Minute,
		MinBackoff:      100 * time.Millisecond,
		Credentials:     federation.EnvCredentials(func(n string) string { return map[string]string{"DOWN_TOKEN": "s3cret-down-token"}[n] }),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := fed.Start(context.Background(), gw); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fed.Close() })
	c := rigouttest.Connect(t, gw)

	for _, name := range []string{"a__big", "web__big"} {
		res := rigouttest.Call(t, c, name, map[string]any{"size": 200 << 10})
		text := rigouttest.Text(res)
		if res.IsError || !strings.Contains(text, "[result cut at 65536 bytes: downstream") || len(text) > 65536+300 {
			t.Fatalf("%s of 200 KiB: error=%v, %d bytes, ends %q", name, res.IsError, len(text), text[max(0, len(text)-200):])
		}
		if strings.Count(text, "x") != 65536 {
			t.Errorf("%s kept %d bytes of the text, want 65536", name, strings.Count(text, "x"))
		}
	}
	if evs := rigouttest.Events(t, l, audit.Filter{Tool: "a__big"}); len(evs) == 0 || !evs[len(evs)-1].Truncated {
		t.Errorf("the ledger does not say the result was cut: %+v", evs)
	}

	for _, name := range []string{"fl__flood", "web__flood"} {
		done := make(chan string, 1)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		go func() {
			res := rigouttest.Call(t, c, name, nil)
			done <- rigouttest.Text(res)
		}()
		// Another downstream answers while the big message arrives.
		if res := rigouttest.Call(t, c, "b__echo", map[string]any{"msg": "meanwhile"}); res.IsError || rigouttest.Text(res) != "echo:meanwhile" {
			t.Fatalf("b__echo during %s: %q", name, rigouttest.Text(res))
		}
		text := <-done
		runtime.ReadMemStats(&after)
		if !strings.Contains(text, "over the 4194304-byte limit (max_message_bytes)") {
			t.Fatalf("%s of 50 MiB: %q", name, text)
		}
		alloc := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s: a 50 MiB message refused; the gateway allocated %.1f MiB meanwhile", name, float64(alloc)/(1<<20))
		if alloc > 40<<20 {
			t.Errorf("%s: the gateway allocated %d MiB for a 50 MiB message it must not read whole", name, alloc>>20)
		}
	}
	eventually(t, "fl serves again", func() bool {
		res := rigouttest.Call(t, c, "fl__echo", map[string]any{"msg": "back"})
		return !res.IsError && rigouttest.Text(res) == "echo:back"
	})
	if st := fed.Status()[3]; st.Restarts < 1 || !strings.Contains(st.LastError, "limit") {
		t.Errorf("status of fl after the oversized message: %+v", st)
	}
}

// syncLog is a log destination safe for the federation's goroutines.
type syncLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncLog) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncLog) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestEnvCredentials: a stdio downstream's variable comes from the
// credentials (the value is in no Server field); the downstream gets it,
// and its result, its stderr as logged, the ledger and the status show it
// only masked. A reference that cannot be resolved keeps the downstream
// down with a reason that names the variable, never a value.
func TestEnvCredentials(t *testing.T) {
	const value = "dk-51ab7c0e-9d2f-harbor"
	sum := sha256.Sum256([]byte(value))
	s := stdioServer("a", t.TempDir())
	s.Env["FEDTEST_KEY_SHA"] = hex.EncodeToString(sum[:])
	s.EnvCredentials = map[string]string{"FEDTEST_KEY": "KEYREF"}
	bad := stdioServer("bad", t.TempDir())
	bad.EnvCredentials = map[string]string{"FEDTEST_KEY": "MISSING"}
	for _, sv := range []federation.Server{s, bad} {
		b, _ := json.Marshal(sv)
		if strings.Contains(string(b), value) {
			t.Fatalf("the server configuration holds the value: %s", b)
		}
	}
	var logs syncLog
	l := rigouttest.OpenLedger(t)
	gw := rigouttest.New(t, rigout.Config{Audit: l})
	fed, err := federation.New(federation.Config{
		Servers:         []federation.Server{s, bad},
		UnsafeNoSandbox: true,
		Logger:          slog.New(slog.NewJSONHandler(&logs, nil)),
		MinBackoff:      time.Hour, // bad stays down for the test
		Credentials:     federation.EnvCredentials(func(n string) string { return map[string]string{"KEYREF": value}[n] }),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := fed.Start(context.Background(), gw); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fed.Close() })
	c := rigouttest.Connect(t, gw)
	forms := []string{value, base64.StdEncoding.EncodeToString([]byte(value)), hex.EncodeToString([]byte(value)), "51ab7c0e"}
	leak := func(what, text string) {
		t.Helper()
		for _, f := range forms {
			if strings.Contains(text, f) {
				t.Fatalf("%s holds %q:\n%s", what, f, text)
			}
		}
	}
	res := rigouttest.Call(t, c, "a__key", nil)
	text := rigouttest.Text(res)
	if res.IsError || !strings.HasPrefix(text, "RIGHT key=") {
		t.Fatalf("the downstream did not get the value: %q", text)
	}
	leak("the result", text)
	if !strings.Contains(text, "key=***") {
		t.Fatalf("result not masked: %q", text)
	}
	eventually(t, "the downstream's stderr in the log", func() bool { return strings.Contains(logs.String(), "starting with key") })
	leak("the log", logs.String())
	if !strings.Contains(logs.String(), "starting with key ***") {
		t.Fatalf("stderr line not masked:\n%s", logs.String())
	}
	st := fed.Status()
	if st[1].State != federation.Down || !strings.Contains(st[1].LastError, "env credential FEDTEST_KEY") || !strings.Contains(st[1].LastError, "MISSING") {
		t.Fatalf("bad downstream: %+v", st[1])
	}
	b, _ := json.Marshal(st)
	leak("the status", string(b))
	for _, e := range rigouttest.Events(t, l, audit.Filter{}) {
		b, _ := json.Marshal(e)
		leak(fmt.Sprintf("ledger row %d", e.Seq), string(b))
	}
}
