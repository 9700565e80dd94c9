package audit_test

import (
	"encoding/hex"
	"testing"
	"time"

	"github.com/rigout/rigout/audit"
)

// TestRowHashGolden pins the canonical encoding: these hashes were computed
// by the ledger before RowHash was exported, and every row already stored
// depends on them. A change here breaks the chain of every existing ledger.
func TestRowHashGolden(t *testing.T) {
	code, neg := 3, -1
	full := audit.Event{Seq: 42, Time: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), Type: "tool.call", CallID: "c1",
		Phase: "done", Principal: "ci", Transport: "http", RemoteAddr: "127.0.0.1:5", Session: "s",
		Tool: "execute_command", Host: "web1", Route: "ssh(web1 → 10.0.0.5:22)", Decision: "allow", Rule: "r7",
		Bypassed: true, ExitCode: &code, Signal: "TERM", Duration: 1500 * time.Millisecond, StdoutBytes: 10,
		StderrBytes: 2, Truncated: true, Status: "error", Error: "boom", ArgsDigest: "0123456789abcdef",
		Args: `{"command":"uptime"}`, Detail: `{"x":1}`,
		PrevHash: "ignored", Hash: "ignored"}
	var counting [32]byte
	for i := range counting {
		counting[i] = byte(i)
	}
	tests := []struct {
		name string
		e    audit.Event
		prev [32]byte
		want string
	}{
		{"every field", full, counting, "c0a01a0eb761d09b0477527204cd934e331a2fbd4c60a40424d06b0cfa8fd03c"},
		{"type only, zero time", audit.Event{Type: "a.b"}, [32]byte{}, "81b5058cd98d416c7320cb91c23c4b9dc2520d1d433add1cfa229cb30d354659"},
		{"negative exit code", audit.Event{Seq: 1, Type: "x", ExitCode: &neg}, [32]byte{}, "bd787e5d3ec3ae27bd1718e62888ebf8be4128e9b6c1e616065cfe236b6f3099"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := audit.RowHash(&tt.e, tt.prev)
			if got := hex.EncodeToString(h[:]); got != tt.want {
				t.Errorf("RowHash = %s, want %s", got, tt.want)
			}
		})
	}
}

// TestRowHashCoversEveryField changes each stored field in turn and checks
// that the hash changes, and that PrevHash and Hash do not take part.
func TestRowHashCoversEveryField(t *testing.T) {
	code := 0
	base := audit.Event{Seq: 1, Time: time.Unix(1, 0), Type: "t.t", ExitCode: &code}
	other := 1
	mods := map[string]func(*audit.Event){
		"Seq":         func(e *audit.Event) { e.Seq++ },
		"Time":        func(e *audit.Event) { e.Time = e.Time.Add(time.Nanosecond) },
		"Type":        func(e *audit.Event) { e.Type += "x" },
		"CallID":      func(e *audit.Event) { e.CallID = "x" },
		"Phase":       func(e *audit.Event) { e.Phase = "x" },
		"Principal":   func(e *audit.Event) { e.Principal = "x" },
		"Transport":   func(e *audit.Event) { e.Transport = "x" },
		"RemoteAddr":  func(e *audit.Event) { e.RemoteAddr = "x" },
		"Session":     func(e *audit.Event) { e.Session = "x" },
		"Tool":        func(e *audit.Event) { e.Tool = "x" },
		"Host":        func(e *audit.Event) { e.Host = "x" },
		"Route":       func(e *audit.Event) { e.Route = "x" },
		"Decision":    func(e *audit.Event) { e.Decision = "x" },
		"Rule":        func(e *audit.Event) { e.Rule = "x" },
		"Bypassed":    func(e *audit.Event) { e.Bypassed = true },
		"ExitCode":    func(e *audit.Event) { e.ExitCode = &other },
		"ExitCodeNil": func(e *audit.Event) { e.ExitCode = nil },
		"Signal":      func(e *audit.Event) { e.Signal = "x" },
		"Duration":    func(e *audit.Event) { e.Duration = 1 },
		"StdoutBytes": func(e *audit.Event) { e.StdoutBytes = 1 },
		"StderrBytes": func(e *audit.Event) { e.StderrBytes = 1 },
		"Truncated":   func(e *audit.Event) { e.Truncated = true },
		"Status":      func(e *audit.Event) { e.Status = "x" },
		"Error":       func(e *audit.Event) { e.Error = "x" },
		"ArgsDigest":  func(e *audit.Event) { e.ArgsDigest = "x" },
		"Args":        func(e *audit.Event) { e.Args = "x" },
		"Detail":      func(e *audit.Event) { e.Detail = "x" },
		// Moving a byte from one field to the next must not collide.
		"boundary": func(e *audit.Event) { e.Type, e.CallID = "t.", "t" },
	}
	want := audit.RowHash(&base, [32]byte{})
	if h := audit.RowHash(&base, [32]byte{1}); h == want {
		t.Error("prev does not change the hash")
	}
	for name, mod := range mods {
		e := base
		mod(&e)
		if audit.RowHash(&e, [32]byte{}) == want {
			t.Errorf("changing %s does not change the hash", name)
		}
	}
	e := base
	e.PrevHash, e.Hash = "aa", "bb"
	if audit.RowHash(&e, [32]byte{}) != want {
		t.Error("PrevHash or Hash changes the hash")
	}
}

// TestKeyedDigest: the digest is 16 hex digits, the same for the same key
// and arguments, different under another key, and empty without a key.
func TestKeyedDigest(t *testing.T) {
	raw := []byte(`{"command":"ls"}`)
	a, b := audit.KeyedDigest([]byte("key-one"), raw), audit.KeyedDigest([]byte("key-one"), raw)
	if len(a) != 16 || a != b {
		t.Fatalf("digest %q, again %q", a, b)
	}
	if c := audit.KeyedDigest([]byte("key-two"), raw); c == a {
		t.Fatalf("another key gave the same digest %q", c)
	}
	if d := audit.KeyedDigest(nil, raw); d != "" {
		t.Fatalf("no key: %q, want empty", d)
	}
}

// TestKeyedRowHash: the keyed hash differs from the unkeyed one and from
// itself under another key, covers every field the unkeyed one does (a
// changed field changes it), and is pinned, since every keyed row stored
// depends on it.
func TestKeyedRowHash(t *testing.T) {
	e := audit.Event{Seq: 7, Time: time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC), Type: "tool.call", Principal: "ci", Tool: "execute_command"}
	var prev [32]byte
	k1, k2 := []byte("key one, thirty-two bytes long.."), []byte("key two, thirty-two bytes long..")
	h1 := audit.KeyedRowHash(k1, &e, prev)
	if h1 == audit.RowHash(&e, prev) || h1 == audit.KeyedRowHash(k2, &e, prev) || h1 != audit.KeyedRowHash(k1, &e, prev) {
		t.Fatal("the keyed hash is not distinct per key, or not deterministic")
	}
	edited := e
	edited.Principal = "cj"
	if audit.KeyedRowHash(k1, &edited, prev) == h1 {
		t.Fatal("an edited field keeps the keyed hash")
	}
	if got := hex.EncodeToString(h1[:]); got != "bb77e5fcb7ad3cf795a63dbbf9e9c26d9ffc3070725c4ce1b680a6f85241b751" {
		t.Errorf("keyed hash %s: the keyed encoding changed, which breaks every keyed ledger", got)
	}
	if id := audit.ChainKeyID(k1); len(id) != 16 || id == audit.ChainKeyID(k2) {
		t.Fatalf("ChainKeyID = %q", id)
	}
}

// BenchmarkRowHash is what keying adds to each row written: HMAC-SHA256
// instead of SHA-256 over the same encoding.
func BenchmarkRowHash(b *testing.B) {
	e := audit.Event{Seq: 7, Time: time.Now(), Type: "tool.call", CallID: "c1", Phase: "done", Principal: "ci",
		Tool: "execute_command", Host: "local", Route: "local", Status: "ok", ArgsDigest: "0123456789abcdef"}
	var prev [32]byte
	key := make([]byte, 32)
	b.Run("unkeyed", func(b *testing.B) {
		for b.Loop() {
			prev = audit.RowHash(&e, prev)
		}
	})
	b.Run("keyed", func(b *testing.B) {
		for b.Loop() {
			prev = audit.KeyedRowHash(key, &e, prev)
		}
	})
}
