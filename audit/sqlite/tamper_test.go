package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/sqlite"
)

// baseLedger writes 20 rows (10 calls) and closes the ledger, returning its
// configuration.
func baseLedger(t *testing.T) sqlite.Config {
	t.Helper()
	l, cfg := openLedger(t, nil)
	record(t, l, 10)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// verifyRO opens the ledger read-only, verifies it and returns the problem.
func verifyRO(t *testing.T, cfg sqlite.Config) *sqlite.TamperError {
	t.Helper()
	cfg.ReadOnly = true
	l, err := sqlite.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	rep, err := l.Verify(context.Background())
	var te *sqlite.TamperError
	if err != nil && !errors.As(err, &te) {
		t.Fatalf("Verify: %v", err)
	}
	if (te == nil) != rep.OK() || te != rep.Problem {
		t.Fatalf("error %v disagrees with report %+v", err, rep)
	}
	return te
}

// forgeRow rewrites row seq with a new status and a recomputed hash, as
// someone who knows the encoding would.
func forgeRow(t *testing.T, cfg sqlite.Config, seq int64) {
	t.Helper()
	db := rawDB(t, cfg.Path)
	l, err := sqlite.Open(context.Background(), sqlite.Config{Path: cfg.Path, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := l.Query(context.Background(), audit.Filter{AfterSeq: seq - 1, Limit: 1})
	l.Close()
	if err != nil || len(evs) != 1 {
		t.Fatalf("read row %d: %v", seq, err)
	}
	e := evs[0]
	e.Status = "ok-forged"
	var prevBytes []byte
	if err := db.QueryRow(`SELECT prev_hash FROM events WHERE seq = ?`, seq).Scan(&prevBytes); err != nil {
		t.Fatal(err)
	}
	var prev [32]byte
	copy(prev[:], prevBytes)
	h := audit.RowHash(&e, prev)
	mustExec(t, db, `UPDATE events SET status = ?, row_hash = ? WHERE seq = ?`, e.Status, h[:], seq)
}

func TestVerifyIntact(t *testing.T) {
	cfg := baseLedger(t)
	if te := verifyRO(t, cfg); te != nil {
		t.Fatalf("intact ledger: %v", te)
	}
}

func TestVerifyDetectsTampering(t *testing.T) {
	tests := []struct {
		name    string
		tamper  func(t *testing.T, cfg sqlite.Config)
		wantSeq int64
		want    sqlite.TamperKind
	}{
		{"edit a field", func(t *testing.T, c sqlite.Config) {
			mustExec(t, rawDB(t, c.Path), `UPDATE events SET status = 'ok' WHERE seq = 7`)
		}, 7, sqlite.TamperEdited},
		{"edit the time", func(t *testing.T, c sqlite.Config) {
			mustExec(t, rawDB(t, c.Path), `UPDATE events SET time_ns = time_ns + 1 WHERE seq = 12`)
		}, 12, sqlite.TamperEdited},
		{"clear the exit code", func(t *testing.T, c sqlite.Config) {
			mustExec(t, rawDB(t, c.Path), `UPDATE events SET exit_code = NULL WHERE seq = 4`)
		}, 4, sqlite.TamperEdited},
		{"edit the stored hash", func(t *testing.T, c sqlite.Config) {
			mustExec(t, rawDB(t, c.Path), `UPDATE events SET row_hash = zeroblob(32) WHERE seq = 9`)
		}, 9, sqlite.TamperEdited},
		{"edit and rehash a row", func(t *testing.T, c sqlite.Config) { forgeRow(t, c, 7) }, 7, sqlite.TamperUnkeyed},
		{"edit and rehash the last row", func(t *testing.T, c sqlite.Config) { forgeRow(t, c, 20) }, 20, sqlite.TamperUnkeyed},
		{"delete a row", func(t *testing.T, c sqlite.Config) {
			mustExec(t, rawDB(t, c.Path), `DELETE FROM events WHERE seq = 7`)
		}, 7, sqlite.TamperDeleted},
		{"delete a range", func(t *testing.T, c sqlite.Config) {
			mustExec(t, rawDB(t, c.Path), `DELETE FROM events WHERE seq BETWEEN 5 AND 9`)
		}, 5, sqlite.TamperDeleted},
		{"delete the first rows", func(t *testing.T, c sqlite.Config) {
			mustExec(t, rawDB(t, c.Path), `DELETE FROM events WHERE seq <= 3`)
		}, 1, sqlite.TamperDeleted},
		{"swap two rows", func(t *testing.T, c sqlite.Config) {
			db := rawDB(t, c.Path)
			mustExec(t, db, `UPDATE events SET seq = -1 WHERE seq = 7`)
			mustExec(t, db, `UPDATE events SET seq = 7 WHERE seq = 8`)
			mustExec(t, db, `UPDATE events SET seq = 8 WHERE seq = -1`)
		}, 7, sqlite.TamperReordered},
		{"delete a row and renumber the rest", func(t *testing.T, c sqlite.Config) {
			db := rawDB(t, c.Path)
			mustExec(t, db, `DELETE FROM events WHERE seq = 7`)
			for s := 8; s <= 20; s++ {
				mustExec(t, db, `UPDATE events SET seq = ? WHERE seq = ?`, s-1, s)
			}
		}, 7, sqlite.TamperReordered},
		{"truncate the tail", func(t *testing.T, c sqlite.Config) {
			mustExec(t, rawDB(t, c.Path), `DELETE FROM events WHERE seq >= 18`)
		}, 18, sqlite.TamperTruncated},
		{"truncate the last row", func(t *testing.T, c sqlite.Config) {
			mustExec(t, rawDB(t, c.Path), `DELETE FROM events WHERE seq = 20`)
		}, 20, sqlite.TamperTruncated},
		{"truncate everything", func(t *testing.T, c sqlite.Config) {
			mustExec(t, rawDB(t, c.Path), `DELETE FROM events`)
		}, 1, sqlite.TamperTruncated},
		{"remove the head file", func(t *testing.T, c sqlite.Config) {
			if err := os.Remove(c.Path + ".head"); err != nil {
				t.Fatal(err)
			}
		}, 0, sqlite.TamperHeadMissing},
		{"forge a fake prune", func(t *testing.T, c sqlite.Config) {
			// Deleting rows and pretending a prune happened needs a prune
			// event in the chain; a bare anchor is not enough.
			mustExec(t, rawDB(t, c.Path), `DELETE FROM events WHERE seq <= 2`)
		}, 1, sqlite.TamperDeleted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := baseLedger(t)
			tt.tamper(t, cfg)
			te := verifyRO(t, cfg)
			if te == nil {
				t.Fatal("Verify passed a tampered ledger")
			}
			if te.Seq != tt.wantSeq || te.Kind != tt.want {
				t.Errorf("Verify = seq %d %s (%s), want seq %d %s", te.Seq, te.Kind, te.Detail, tt.wantSeq, tt.want)
			}
		})
	}
}

// TestTruncationSurvivesReopen checks that a writer opening a truncated
// ledger records the truncation, so Verify still reports it after the head
// has moved on.
func TestTruncationSurvivesReopen(t *testing.T) {
	tests := []struct {
		name    string
		tamper  func(t *testing.T, cfg sqlite.Config)
		wantSeq int64
		want    sqlite.TamperKind
	}{
		{"tail deleted", func(t *testing.T, c sqlite.Config) {
			mustExec(t, rawDB(t, c.Path), `DELETE FROM events WHERE seq >= 15`)
		}, 15, sqlite.TamperTruncated},
		{"all deleted", func(t *testing.T, c sqlite.Config) {
			mustExec(t, rawDB(t, c.Path), `DELETE FROM events`)
		}, 1, sqlite.TamperTruncated},
		{"database replaced", func(t *testing.T, c sqlite.Config) {
			for _, suffix := range []string{"", "-wal", "-shm"} {
				os.Remove(c.Path + suffix)
			}
		}, 1, sqlite.TamperTruncated},
		{"head removed", func(t *testing.T, c sqlite.Config) {
			os.Remove(c.Path + ".head")
		}, 21, sqlite.TamperHeadMissing},
		{"tail rewritten", func(t *testing.T, c sqlite.Config) { forgeRow(t, c, 20) }, 20, sqlite.TamperUnkeyed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := baseLedger(t)
			tt.tamper(t, cfg)
			l, err := sqlite.Open(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			record(t, l, 2)
			mm, err := l.Query(context.Background(), audit.Filter{Type: audit.TypeHeadMismatch})
			if err != nil || len(mm) != 1 {
				t.Fatalf("%d mismatch events, %v", len(mm), err)
			}
			l.Close()
			te := verifyRO(t, cfg)
			if te == nil {
				t.Fatal("Verify passed after the writer reopened a tampered ledger")
			}
			if te.Seq != tt.wantSeq || te.Kind != tt.want {
				t.Errorf("Verify = seq %d %s (%s), want seq %d %s", te.Seq, te.Kind, te.Detail, tt.wantSeq, tt.want)
			}
		})
	}
}

// TestRandomMutations applies random single mutations to copies of one
// ledger; Verify must flag every one of them.
func TestRandomMutations(t *testing.T) {
	base := baseLedger(t)
	rng := rand.New(rand.NewPCG(1, 2))
	columns := []string{"time_ns", "type", "call_id", "phase", "principal", "tool", "host", "route",
		"decision", "rule", "bypassed", "exit_code", "duration_ns", "stdout_bytes", "status", "args_digest", "prev_hash", "row_hash"}
	const rounds = 200
	for i := range rounds {
		cfg := copyLedger(t, base)
		db := rawDB(t, cfg.Path)
		seq := 1 + rng.Int64N(20)
		var what string
		switch rng.IntN(5) {
		case 0, 1: // edit one column
			col := columns[rng.IntN(len(columns))]
			what = "edit " + col
			switch col {
			case "prev_hash", "row_hash":
				mustExec(t, db, fmt.Sprintf(`UPDATE events SET %s = randomblob(32) WHERE seq = ?`, col), seq)
			case "time_ns", "bypassed", "duration_ns", "stdout_bytes":
				mustExec(t, db, fmt.Sprintf(`UPDATE events SET %s = %s + 1 WHERE seq = ?`, col, col), seq)
			case "exit_code":
				mustExec(t, db, `UPDATE events SET exit_code = COALESCE(exit_code, 0) + 1 WHERE seq = ?`, seq)
			default:
				mustExec(t, db, fmt.Sprintf(`UPDATE events SET %s = %s || 'x' WHERE seq = ?`, col, col), seq)
			}
		case 2: // delete a row
			what = "delete"
			mustExec(t, db, `DELETE FROM events WHERE seq = ?`, seq)
		case 3: // move a row to another seq
			other := 1 + rng.Int64N(20)
			if other == seq {
				other = seq%20 + 1
			}
			what = fmt.Sprintf("swap with %d", other)
			mustExec(t, db, `UPDATE events SET seq = -1 WHERE seq = ?`, seq)
			mustExec(t, db, `UPDATE events SET seq = ? WHERE seq = ?`, seq, other)
			mustExec(t, db, `UPDATE events SET seq = ? WHERE seq = -1`, other)
		case 4: // truncate from seq
			what = "truncate"
			mustExec(t, db, `DELETE FROM events WHERE seq >= ?`, seq)
		}
		db.Close()
		if te := verifyRO(t, cfg); te == nil {
			t.Fatalf("round %d: %s at seq %d not detected", i, what, seq)
		}
	}
}

// copyLedger copies a closed ledger's files to a new directory.
func copyLedger(t *testing.T, cfg sqlite.Config) sqlite.Config {
	t.Helper()
	dir := t.TempDir()
	out := sqlite.Config{Path: filepath.Join(dir, "audit.db")}
	for _, suffix := range []string{"", ".head", ".key", "-wal"} {
		src, err := os.Open(cfg.Path + suffix)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		dst, err := os.OpenFile(out.Path+suffix, os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(dst, src); err != nil {
			t.Fatal(err)
		}
		src.Close()
		dst.Close()
	}
	return out
}

// TestLaggingHeadIsAccepted covers a crash between a commit and the head
// update: the head names an older row, which is present and unchanged.
func TestLaggingHeadIsAccepted(t *testing.T) {
	l, cfg := openLedger(t, nil)
	record(t, l, 2)
	old, err := os.ReadFile(cfg.Path + ".head")
	if err != nil {
		t.Fatal(err)
	}
	record(t, l, 3)
	l.Close()
	if err := os.WriteFile(cfg.Path+".head", old, 0o600); err != nil {
		t.Fatal(err)
	}
	if te := verifyRO(t, cfg); te != nil {
		t.Fatalf("lagging head reported as %v", te)
	}
	l, err = sqlite.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	record(t, l, 1)
	if mm, _ := l.Query(context.Background(), audit.Filter{Type: audit.TypeHeadMismatch}); len(mm) != 0 {
		t.Fatalf("lagging head recorded as a mismatch: %s", mm[0].Error)
	}
	// A torn write of either slot falls back to the other; with neither
	// readable, truncation can no longer be ruled out.
	good, _ := os.ReadFile(cfg.Path + ".head")
	tear := func(slots ...int) {
		b := append([]byte(nil), good...)
		for _, s := range slots {
			for i := s * 256; i < s*256+40; i++ {
				b[i] = 0
			}
		}
		if err := os.WriteFile(cfg.Path+".head", b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, slot := range []int{0, 1} {
		tear(slot)
		if _, err := l.Verify(context.Background()); err != nil {
			t.Errorf("slot %d torn: %v", slot, err)
		}
	}
	tear(0, 1)
	var te *sqlite.TamperError
	if _, err := l.Verify(context.Background()); !errors.As(err, &te) || te.Kind != sqlite.TamperHeadMissing {
		t.Fatalf("both slots torn: %v", err)
	}
	os.WriteFile(cfg.Path+".head", good, 0o600)
}
