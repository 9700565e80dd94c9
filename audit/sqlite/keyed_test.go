package sqlite_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"strings"
	"testing"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/sqlite"
)

// principalLedger records calls of two principals: alice's with
// mallory's interleaved, or, when tail is set, mallory's only at the end
// of the ledger. A refusal of mallory's is among them.
func principalLedger(t *testing.T, l *sqlite.Ledger, tail bool) {
	t.Helper()
	ctx := context.Background()
	for i := range 12 {
		in, done := call(i)
		in.Principal, done.Principal = "alice", "alice"
		if tail && i >= 10 || !tail && i%3 == 1 {
			in.Principal, done.Principal = "mallory", "mallory"
		}
		for _, e := range []audit.Event{in, done} {
			if err := l.Record(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
	}
	deny := audit.Event{Type: audit.TypeToolCall, Phase: audit.PhaseDone, CallID: "refused", Principal: "mallory",
		Tool: "execute_command", Decision: audit.DecisionDeny, Rule: "protected-root", Status: audit.StatusDenied}
	if err := l.Record(ctx, deny); err != nil {
		t.Fatal(err)
	}
}

// attacker is someone who can write the ledger's files but cannot read its
// key: they know the encoding, the schema and the head's format.
type attacker struct {
	cfg sqlite.Config
	key []byte // the attacker's own key, for the variants that key anything
}

// rows reads every row as stored.
func (a attacker) rows(t *testing.T) []audit.Event {
	t.Helper()
	l, err := sqlite.Open(context.Background(), sqlite.Config{Path: a.cfg.Path, ReadOnly: true, SecretPath: os.DevNull + ".absent"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	evs, err := l.Query(context.Background(), audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// deleteRechained deletes every row of principal, renumbers the rest from
// 1 and re-chains them with hash. It returns the new tail.
func (a attacker) deleteRechained(t *testing.T, principal string, hash func(*audit.Event, [32]byte) [32]byte) (int64, [32]byte) {
	t.Helper()
	evs := a.rows(t)
	db := rawDB(t, a.cfg.Path)
	mustExec(t, db, `DELETE FROM events`)
	var prev [32]byte
	var seq int64
	for _, e := range evs {
		if e.Principal == principal {
			continue
		}
		seq++
		e.Seq = seq
		h := hash(&e, prev)
		var exit any
		if e.ExitCode != nil {
			exit = *e.ExitCode
		}
		mustExec(t, db, `INSERT INTO events (seq, time_ns, type, call_id, phase, principal, transport, remote_addr, session,
			tool, host, route, decision, rule, bypassed, exit_code, signal, duration_ns, stdout_bytes, stderr_bytes,
			truncated, status, error, args_digest, args, detail, prev_hash, row_hash)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			e.Seq, e.Time.UnixNano(), e.Type, e.CallID, e.Phase, e.Principal, e.Transport, e.RemoteAddr, e.Session,
			e.Tool, e.Host, e.Route, string(e.Decision), e.Rule, e.Bypassed, exit, e.Signal, int64(e.Duration),
			e.StdoutBytes, e.StderrBytes, e.Truncated, string(e.Status), e.Error, e.ArgsDigest, e.Args, e.Detail, prev[:], h[:])
		prev = h
	}
	return seq, prev
}

// deleteTail deletes the principal's rows at the end of the ledger, which
// needs no re-chaining. It returns the new tail.
func (a attacker) deleteTail(t *testing.T, principal string) (int64, [32]byte) {
	t.Helper()
	evs := a.rows(t)
	db := rawDB(t, a.cfg.Path)
	n := len(evs)
	for n > 0 && evs[n-1].Principal == principal {
		n--
	}
	mustExec(t, db, `DELETE FROM events WHERE seq > ?`, evs[n-1].Seq)
	var h [32]byte
	hex.Decode(h[:], []byte(evs[n-1].Hash))
	return evs[n-1].Seq, h
}

// headV1 writes an unkeyed head, as earlier versions did.
func (a attacker) headV1(t *testing.T, seq int64, hash [32]byte) {
	line := fmt.Sprintf("rigout-audit-head 1 %020d %x ", seq, hash)
	line += fmt.Sprintf("%08x", crc32.ChecksumIEEE([]byte(line)))
	slot := line + string(bytes.Repeat([]byte{' '}, 127-len(line))) + "\n"
	a.writeHead(t, slot+slot)
}

// headV2 writes a keyed head naming keyID with a MAC under the attacker's key.
func (a attacker) headV2(t *testing.T, seq int64, hash [32]byte, keyID string) {
	line := fmt.Sprintf("rigout-audit-head 2 %020d %x %s ", seq, hash, keyID)
	m := hmac.New(sha256.New, a.key)
	m.Write([]byte("rigout.audit.head.v2\x00" + line))
	line += hex.EncodeToString(m.Sum(nil))
	slot := line + string(bytes.Repeat([]byte{' '}, 255-len(line))) + "\n"
	a.writeHead(t, slot+slot)
}

func (a attacker) writeHead(t *testing.T, content string) {
	t.Helper()
	if err := os.WriteFile(a.cfg.Path+".head", []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// ledgerKeyID reads the key ID the genuine head names: it is not secret.
func (a attacker) ledgerKeyID(t *testing.T) string {
	b, err := os.ReadFile(a.cfg.Path + ".head")
	if err != nil || len(b) < 122 {
		t.Fatalf("read head: %v", err)
	}
	return string(b[106:122])
}

// TestRewriteWithoutKeyFailsVerify rewrites a ledger as a command that can
// write it but not read the chain key would: it deletes every row of its
// own principal (a refusal among them), re-chains the rest, and fixes the
// head. Verify names the first forged row or the forged head, and a
// gateway that kept the ledger open records the forged tail as a mismatch
// the next time it writes, instead of adopting it.
func TestRewriteWithoutKeyFailsVerify(t *testing.T) {
	unkeyed := audit.RowHash
	tests := []struct {
		name     string
		tail     bool // mallory's rows end the ledger
		rewrite  func(t *testing.T, a attacker) (int64, [32]byte)
		fixHead  func(t *testing.T, a attacker, seq int64, h [32]byte)
		wantSeq  int64
		wantKind sqlite.TamperKind
	}{
		{"re-chain unkeyed, unkeyed head", false,
			func(t *testing.T, a attacker) (int64, [32]byte) { return a.deleteRechained(t, "mallory", unkeyed) },
			func(t *testing.T, a attacker, seq int64, h [32]byte) { a.headV1(t, seq, h) }, 1, sqlite.TamperUnkeyed},
		{"re-chain unkeyed, head keyed with the attacker's key", false,
			func(t *testing.T, a attacker) (int64, [32]byte) { return a.deleteRechained(t, "mallory", unkeyed) },
			func(t *testing.T, a attacker, seq int64, h [32]byte) { a.headV2(t, seq, h, audit.ChainKeyID(a.key)) },
			1, sqlite.TamperUnkeyed},
		{"re-chain keyed with the attacker's key, head with the ledger's key ID", false,
			func(t *testing.T, a attacker) (int64, [32]byte) {
				return a.deleteRechained(t, "mallory", func(e *audit.Event, p [32]byte) [32]byte { return audit.KeyedRowHash(a.key, e, p) })
			},
			func(t *testing.T, a attacker, seq int64, h [32]byte) { a.headV2(t, seq, h, a.ledgerKeyID(t)) },
			1, sqlite.TamperEdited},
		{"re-chain unkeyed, head removed", false,
			func(t *testing.T, a attacker) (int64, [32]byte) { return a.deleteRechained(t, "mallory", unkeyed) },
			func(t *testing.T, a attacker, _ int64, _ [32]byte) { os.Remove(a.cfg.Path + ".head") },
			1, sqlite.TamperUnkeyed},
		{"cut the tail, unkeyed head", true,
			func(t *testing.T, a attacker) (int64, [32]byte) { return a.deleteTail(t, "mallory") },
			func(t *testing.T, a attacker, seq int64, h [32]byte) { a.headV1(t, seq, h) }, 0, sqlite.TamperUnkeyed},
		{"cut the tail, head with the ledger's key ID", true,
			func(t *testing.T, a attacker) (int64, [32]byte) { return a.deleteTail(t, "mallory") },
			func(t *testing.T, a attacker, seq int64, h [32]byte) { a.headV2(t, seq, h, a.ledgerKeyID(t)) },
			0, sqlite.TamperUnkeyed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The gateway's ledger stays open throughout, as a running
			// gateway's does.
			gw, cfg := openLedger(t, nil)
			principalLedger(t, gw, tt.tail)
			if te := verifyRO(t, cfg); te != nil {
				t.Fatalf("before the rewrite: %v", te)
			}
			a := attacker{cfg: cfg, key: bytes.Repeat([]byte("attacker"), 4)}
			seq, h := tt.rewrite(t, a)
			tt.fixHead(t, a, seq, h)
			for _, e := range a.rows(t) {
				if e.Principal == "mallory" {
					t.Fatalf("row %d of mallory survived the rewrite", e.Seq)
				}
			}

			te := verifyRO(t, cfg)
			if te == nil {
				t.Fatal("Verify passed a ledger rewritten without the key")
			}
			if te.Seq != tt.wantSeq || te.Kind != tt.wantKind {
				t.Errorf("Verify = seq %d %s (%s), want seq %d %s", te.Seq, te.Kind, te.Detail, tt.wantSeq, tt.wantKind)
			}

			// The running gateway writes on: it finds a tail it did not
			// leave and records why it does not trust it.
			in, _ := call(99)
			if err := gw.Record(context.Background(), in); err != nil {
				t.Fatal(err)
			}
			mm, err := gw.Query(context.Background(), audit.Filter{Type: audit.TypeHeadMismatch})
			if err != nil || len(mm) != 1 {
				t.Fatalf("the running gateway recorded %d mismatches (%v); want 1", len(mm), err)
			}
			t.Logf("recorded: %s", mm[0].Error)
			if te := verifyRO(t, cfg); te == nil {
				t.Fatal("Verify passed once the gateway wrote after the forged tail")
			}
		})
	}
}

// TestRewriteWithoutKeyAtOpen: a gateway that starts on a ledger
// rewritten without the key does not adopt the forged chain, whatever head
// the rewrite left: it records the forgery, or (for a head naming another
// key) records a key change that Verify cannot vouch for. Either way Verify
// fails after the gateway has written on.
func TestRewriteWithoutKeyAtOpen(t *testing.T) {
	tests := []struct {
		name        string
		fixHead     func(t *testing.T, a attacker, seq int64, h [32]byte)
		wantMarker  bool              // a key change is recorded instead of a mismatch
		wantFound   sqlite.TamperKind // the mismatch recorded otherwise
		wantVerify  sqlite.TamperKind
		wantVerifyN int64
	}{
		{"genuine head left", func(*testing.T, attacker, int64, [32]byte) {}, false, sqlite.TamperUnkeyed, sqlite.TamperUnkeyed, 1},
		{"unkeyed head", func(t *testing.T, a attacker, seq int64, h [32]byte) { a.headV1(t, seq, h) }, false, sqlite.TamperUnkeyed, sqlite.TamperUnkeyed, 1},
		{"head removed", func(t *testing.T, a attacker, _ int64, _ [32]byte) { os.Remove(a.cfg.Path + ".head") },
			false, sqlite.TamperHeadMissing, sqlite.TamperUnkeyed, 1},
		{"head naming another key", func(t *testing.T, a attacker, seq int64, h [32]byte) { a.headV2(t, seq, h, audit.ChainKeyID(a.key)) },
			true, "", sqlite.TamperUnkeyed, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, cfg := openLedger(t, nil)
			principalLedger(t, l, false)
			l.Close()
			a := attacker{cfg: cfg, key: bytes.Repeat([]byte("attacker"), 4)}
			seq, h := a.deleteRechained(t, "mallory", audit.RowHash)
			tt.fixHead(t, a, seq, h)
			l, err := sqlite.Open(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			record(t, l, 1)
			mm, _ := l.Query(context.Background(), audit.Filter{Type: audit.TypeHeadMismatch})
			ck, _ := l.Query(context.Background(), audit.Filter{Type: audit.TypeChainKey})
			l.Close()
			switch {
			case tt.wantMarker && (len(ck) != 1 || len(mm) != 0):
				t.Fatalf("%d chain key events, %d mismatches; want a key change only", len(ck), len(mm))
			case !tt.wantMarker && (len(ck) != 0 || len(mm) != 1):
				t.Fatalf("%d chain key events, %d mismatches; want one mismatch and no key change", len(ck), len(mm))
			case !tt.wantMarker && !strings.Contains(mm[0].Detail, `"found":"`+string(tt.wantFound)+`"`):
				t.Fatalf("mismatch recorded: %s", mm[0].Detail)
			}
			te := verifyRO(t, cfg)
			if te == nil {
				t.Fatal("Verify passed a forged chain once a gateway had opened it")
			}
			if te.Kind != tt.wantVerify || te.Seq != tt.wantVerifyN {
				t.Errorf("Verify = seq %d %s (%s), want seq %d %s", te.Seq, te.Kind, te.Detail, tt.wantVerifyN, tt.wantVerify)
			}
		})
	}
}

// TestChainKeyChange covers a replaced key: the writer records the change,
// Verify without the old key cannot check the rows before it, and with the
// old key among the retired ones the whole chain verifies. A key of the
// wrong size is refused.
func TestChainKeyChange(t *testing.T) {
	k1, k2 := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	l, cfg := openLedger(t, func(c *sqlite.Config) { c.ChainKey = k1 })
	record(t, l, 3)
	l.Close()

	cfg.ChainKey = k2
	l, err := sqlite.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	record(t, l, 2)
	ck, err := l.Query(context.Background(), audit.Filter{Type: audit.TypeChainKey})
	if err != nil || len(ck) != 1 || ck[0].Seq != 7 {
		t.Fatalf("chain key events = %+v, %v; want one at seq 7", ck, err)
	}
	want := fmt.Sprintf(`{"key_id":%q,"previous_key_id":%q}`, audit.ChainKeyID(k2), audit.ChainKeyID(k1))
	if ck[0].Detail != want {
		t.Errorf("chain key detail = %s, want %s", ck[0].Detail, want)
	}
	if mm, _ := l.Query(context.Background(), audit.Filter{Type: audit.TypeHeadMismatch}); len(mm) != 0 {
		t.Errorf("a key change was recorded as a mismatch: %s", mm[0].Error)
	}
	l.Close()

	tests := []struct {
		name     string
		mod      func(c *sqlite.Config)
		wantSeq  int64
		wantKind sqlite.TamperKind // "" for an intact chain
	}{
		{"new key only", func(c *sqlite.Config) {}, 1, sqlite.TamperKeyUnknown},
		{"new key and the retired one", func(c *sqlite.Config) { c.RetiredChainKeys = [][]byte{k1} }, 0, ""},
		{"old key only", func(c *sqlite.Config) { c.ChainKey = k1 }, 0, sqlite.TamperKeyUnknown},
		{"no key", func(c *sqlite.Config) { c.ChainKey = nil; c.SecretPath = cfg.Path + ".absent" }, 1, sqlite.TamperKeyUnknown},
		{"the derived key", func(c *sqlite.Config) { c.ChainKey = nil }, 1, sqlite.TamperKeyUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cfg
			tt.mod(&c)
			te := verifyRO(t, c)
			switch {
			case tt.wantKind == "" && te != nil:
				t.Fatalf("Verify = %v, want intact", te)
			case tt.wantKind == "":
			case te == nil:
				t.Fatalf("Verify passed, want %s", tt.wantKind)
			case te.Kind != tt.wantKind || tt.wantSeq != 0 && te.Seq != tt.wantSeq:
				t.Errorf("Verify = seq %d %s (%s), want seq %d %s", te.Seq, te.Kind, te.Detail, tt.wantSeq, tt.wantKind)
			}
		})
	}

	cfg.ChainKey = []byte("short")
	if _, err := sqlite.Open(context.Background(), cfg); err == nil {
		t.Error("Open accepted a 5-byte chain key")
	}
}

// TestKeyedRowsAndHead checks what a fresh ledger stores: every row
// verifies under the keyed hash and not the unkeyed one, and the head
// verifies only under the key.
func TestKeyedRowsAndHead(t *testing.T) {
	key := bytes.Repeat([]byte{9}, 32)
	l, cfg := openLedger(t, func(c *sqlite.Config) { c.ChainKey = key })
	record(t, l, 2)
	rep, err := l.Verify(context.Background())
	if err != nil || rep.KeyedFrom != 1 || !rep.HeadKeyed || rep.KeyID != audit.ChainKeyID(key) {
		t.Fatalf("Verify = %+v, %v", rep, err)
	}
	evs, err := l.Query(context.Background(), audit.Filter{})
	if err != nil || len(evs) != 4 {
		t.Fatalf("Query = %d rows, %v", len(evs), err)
	}
	for _, e := range evs {
		var prev [32]byte
		hex.Decode(prev[:], []byte(e.PrevHash))
		if k := audit.KeyedRowHash(key, &e, prev); hex.EncodeToString(k[:]) != e.Hash {
			t.Errorf("row %d: stored hash is not the keyed hash", e.Seq)
		}
		if u := audit.RowHash(&e, prev); hex.EncodeToString(u[:]) == e.Hash {
			t.Errorf("row %d: stored hash is the unkeyed hash", e.Seq)
		}
	}
	// One flipped bit of the head's MAC is a forged head.
	b, err := os.ReadFile(cfg.Path + ".head")
	if err != nil {
		t.Fatal(err)
	}
	for _, off := range []int{123, 256 + 123} {
		if b[off] == '0' {
			b[off] = '1'
		} else {
			b[off] = '0'
		}
	}
	os.WriteFile(cfg.Path+".head", b, 0o600)
	var te *sqlite.TamperError
	if _, err := l.Verify(context.Background()); !errors.As(err, &te) || te.Kind != sqlite.TamperUnkeyed {
		t.Fatalf("Verify with a forged head MAC = %v", err)
	}
}

// TestAnchorDetectsDeletedLedger deletes the whole ledger (database, its
// WAL, the head file and, in one case, the key) and lets the gateway start
// a new one, as someone who can write the state directory could. Without
// an anchor the new ledger verifies; with an anchor outside the state
// directory, the gateway records the loss and Verify fails.
func TestAnchorDetectsDeletedLedger(t *testing.T) {
	tests := []struct {
		name      string
		anchor    bool
		deleteKey bool
		wantKind  sqlite.TamperKind // "" when the deletion goes unseen
	}{
		{"no anchor", false, false, ""},
		{"anchor", true, false, sqlite.TamperTruncated},
		{"anchor, key deleted too", true, true, sqlite.TamperTruncated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			anchor := ""
			if tt.anchor {
				anchor = t.TempDir() + "/audit.anchor"
			}
			l, cfg := openLedger(t, func(c *sqlite.Config) { c.AnchorPath = anchor })
			record(t, l, 5)
			if rep, err := l.Verify(context.Background()); err != nil || tt.anchor && rep.AnchorSeq != 10 {
				t.Fatalf("Verify before = %+v, %v", rep, err)
			}
			l.Close()
			for _, suffix := range []string{"", "-wal", "-shm", ".head"} {
				os.Remove(cfg.Path + suffix)
			}
			if tt.deleteKey {
				os.Remove(cfg.Path + ".key")
			}
			l, err := sqlite.Open(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			record(t, l, 1)
			l.Close()
			te := verifyRO(t, cfg)
			switch {
			case tt.wantKind == "" && te != nil:
				t.Fatalf("Verify = %v, want the deletion unseen (no anchor)", te)
			case tt.wantKind == "":
			case te == nil:
				t.Fatal("Verify passed a ledger deleted and started again")
			case te.Kind != tt.wantKind || te.Seq != 1:
				t.Errorf("Verify = seq %d %s (%s), want seq 1 %s", te.Seq, te.Kind, te.Detail, tt.wantKind)
			}
		})
	}
}
