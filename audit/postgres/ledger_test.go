package postgres_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/postgres"
	"github.com/rigout/rigout/audit/postgres/pgtest"
)

// testChainKey is the chain key every gateway of these tests shares.
var testChainKey = []byte("rigout postgres test chain key..")

func open(t *testing.T, dsn, gateway string, mod func(*postgres.Config)) *postgres.Ledger {
	t.Helper()
	cfg := postgres.Config{DSN: dsn, Gateway: gateway, WriteTimeout: 3 * time.Second, ChainKey: testChainKey}
	if mod != nil {
		mod(&cfg)
	}
	l, err := postgres.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("open %s: %v", gateway, err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func call(id string) audit.Event {
	return audit.Event{Type: audit.TypeToolCall, Phase: audit.PhaseIntent, CallID: id, Principal: "ci",
		Tool: "execute_command", Host: "local", Status: audit.StatusStarted}
}

func mustVerify(t *testing.T, l *postgres.Ledger) postgres.VerifyReport {
	t.Helper()
	rep, err := l.Verify(context.Background())
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	return rep
}

func TestRecordQueryStatsVerify(t *testing.T) {
	srv := pgtest.Start(t)
	dsn := srv.CreateDB("rt")
	ctx := context.Background()
	l := open(t, dsn, "gw-a", nil)
	code := 0
	ev, err := l.Append(ctx, call("c1"))
	if err != nil {
		t.Fatal(err)
	}
	if ev.Seq != 1 || ev.PrevHash != strings.Repeat("0", 64) || len(ev.Hash) != 64 {
		t.Fatalf("first row: seq %d prev %s hash %s", ev.Seq, ev.PrevHash, ev.Hash)
	}
	done := call("c1")
	done.Phase, done.Status, done.ExitCode, done.Duration = audit.PhaseDone, audit.StatusOK, &code, 3*time.Millisecond
	if err := l.Record(ctx, done); err != nil {
		t.Fatal(err)
	}
	if err := l.Record(ctx, call("c2")); err != nil { // unfinished
		t.Fatal(err)
	}
	if err := l.Record(ctx, audit.Event{Type: "audit.forged"}); !errors.Is(err, audit.ErrInvalidEvent) {
		t.Fatalf("reserved type: %v", err)
	}
	rows, err := l.QueryRows(ctx, audit.Filter{CallID: "c1"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Gateway != "gw-a" || rows[1].ExitCode == nil || *rows[1].ExitCode != 0 || rows[1].Duration != 3*time.Millisecond {
		t.Fatalf("rows: %+v", rows)
	}
	if rows[1].PrevHash != rows[0].Hash {
		t.Fatalf("row 2 not chained to row 1")
	}
	newest, err := l.Query(ctx, audit.Filter{Limit: 1, Newest: true})
	if err != nil || len(newest) != 1 || newest[0].CallID != "c2" {
		t.Fatalf("newest: %+v %v", newest, err)
	}
	pre, err := l.Query(ctx, audit.Filter{Type: "tool.*"})
	if err != nil || len(pre) != 3 {
		t.Fatalf("type prefix: %d %v", len(pre), err)
	}
	st, err := l.Stats(ctx, audit.Filter{})
	if err != nil || len(st) != 1 || st[0].Calls != 1 || st[0].Unfinished != 1 || st[0].P50 != 3*time.Millisecond {
		t.Fatalf("stats: %+v %v", st, err)
	}
	rep := mustVerify(t, l)
	if rep.Rows != 3 || rep.Gateways["gw-a"] != 3 || rep.Heads["gw-a"] != 3 {
		t.Fatalf("verify: %+v", rep)
	}
	// A second gateway shares the digest key and continues the chain.
	m := open(t, dsn, "gw-b", nil)
	if a, b := l.DigestArgs([]byte(`{"x":1}`)), m.DigestArgs([]byte(`{"x":1}`)); a == "" || a != b {
		t.Fatalf("digests differ across gateways: %q %q", a, b)
	}
	if ev, err := m.Append(ctx, call("c3")); err != nil || ev.Seq != 4 {
		t.Fatalf("gw-b append: %+v %v", ev, err)
	}
	if rep := mustVerify(t, l); rep.Gateways["gw-b"] != 1 || rep.LastSeq != 4 {
		t.Fatalf("verify after gw-b: %+v", rep)
	}
	ro := open(t, dsn, "reader", func(c *postgres.Config) { c.ReadOnly = true })
	if err := ro.Record(ctx, call("x")); !errors.Is(err, postgres.ErrReadOnly) {
		t.Fatalf("read-only record: %v", err)
	}
	if _, err := postgres.Open(ctx, postgres.Config{DSN: srv.CreateDB("empty"), ReadOnly: true}); !errors.Is(err, postgres.ErrNoLedger) {
		t.Fatalf("read-only open of an empty database: %v", err)
	}
}

// Two gateways, each with 16 concurrent callers, write one chain: every
// acknowledged row is there exactly once, and the chain verifies.
func TestTwoGatewaysConcurrentLoseNothing(t *testing.T) {
	srv := pgtest.Start(t)
	dsn := srv.CreateDB("load")
	ledgers := []*postgres.Ledger{open(t, dsn, "gw-a", nil), open(t, dsn, "gw-b", nil)}
	const callers, perCaller = 16, 60
	var wg sync.WaitGroup
	errs := make(chan error, 2*callers)
	for gi, l := range ledgers {
		for c := range callers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range perCaller {
					if err := l.Record(context.Background(), call(fmt.Sprintf("g%d-c%d-%d", gi, c, i))); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	rep := mustVerify(t, ledgers[0])
	want := int64(2 * callers * perCaller)
	if rep.Rows != want || rep.Gateways["gw-a"] != want/2 || rep.Gateways["gw-b"] != want/2 {
		t.Fatalf("rows %d (per gateway %v), want %d", rep.Rows, rep.Gateways, want)
	}
	n := srv.Psql("load", `SELECT count(DISTINCT call_id) FROM rigout_audit_events`)
	if n != fmt.Sprint(want) {
		t.Fatalf("distinct call ids %s, want %d", n, want)
	}
	// Group commit: fewer transactions than rows.
	xacts := srv.Psql("load", `SELECT xact_commit FROM pg_stat_database WHERE datname = 'load'`)
	t.Logf("%d rows in %s commits (all transactions of the database)", want, xacts)
}

func TestTamperFoundByVerify(t *testing.T) {
	srv := pgtest.Start(t)
	ctx := context.Background()
	cases := []struct {
		name, sql string
		seq       int64
		kind      postgres.TamperKind
	}{
		{"field", `UPDATE rigout_audit_events SET principal = 'someone-else' WHERE seq = 5`, 5, postgres.TamperEdited},
		{"gateway", `UPDATE rigout_audit_events SET gateway = 'gw-b' WHERE seq = 6`, 6, postgres.TamperEdited},
		{"middle", `DELETE FROM rigout_audit_events WHERE seq = 4`, 4, postgres.TamperDeleted},
		{"end", `DELETE FROM rigout_audit_events WHERE seq > 7`, 8, postgres.TamperTruncated},
		{"rehashed", `UPDATE rigout_audit_events SET row_hash = sha256(row_hash) WHERE seq = 3`, 3, postgres.TamperEdited},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			db := fmt.Sprintf("tamper%d", i)
			l := open(t, srv.CreateDB(db), "gw-a", nil)
			for i := range 10 {
				if err := l.Record(ctx, call(fmt.Sprint(i))); err != nil {
					t.Fatal(err)
				}
			}
			mustVerify(t, l)
			srv.Psql(db, tc.sql)
			rep, err := l.Verify(ctx)
			var te *postgres.TamperError
			if !errors.As(err, &te) || te.Seq != tc.seq || te.Kind != tc.kind || rep.OK() {
				t.Fatalf("verify after %s: %v (report %+v), want %s at seq %d", tc.sql, err, rep.Problem, tc.kind, tc.seq)
			}
			t.Log(te)
		})
	}
	// A truncation is also recorded by the gateway that finds it at its
	// next write, so it stays visible even if the heads table is rewritten.
	l := open(t, srv.CreateDB("trunc"), "gw-a", nil)
	for i := range 5 {
		if err := l.Record(ctx, call(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	srv.Psql("trunc", `DELETE FROM rigout_audit_events WHERE seq > 3; DELETE FROM rigout_audit_heads`)
	if err := l.Record(ctx, call("after")); err != nil {
		t.Fatal(err)
	}
	_, err := l.Verify(ctx)
	var te *postgres.TamperError
	if !errors.As(err, &te) || te.Kind != postgres.TamperTruncated || te.Seq != 4 {
		t.Fatalf("verify after truncation and a new write: %v", err)
	}
}

// The server stops mid-run: calls fail closed with a clear error within
// the write timeout, Healthy says why, and once the server is back the
// ledger records again and the chain verifies.
func TestServerStoppedFailsClosedAndRecovers(t *testing.T) {
	srv := pgtest.Start(t)
	dsn := srv.CreateDB("outage")
	ctx := context.Background()
	l := open(t, dsn, "gw-a", func(c *postgres.Config) { c.WriteTimeout = 2 * time.Second })
	for i := range 5 {
		if err := l.Record(ctx, call(fmt.Sprint("before", i))); err != nil {
			t.Fatal(err)
		}
	}
	srv.Stop()
	start := time.Now()
	err := l.Record(ctx, call("during"))
	var we *postgres.WriteError
	if !errors.As(err, &we) || !strings.Contains(err.Error(), "audit ledger") || !strings.Contains(err.Error(), "unavailable") {
		t.Fatalf("record with the server stopped: %v", err)
	}
	if took := time.Since(start); took > 15*time.Second {
		t.Fatalf("failing closed took %s", took)
	}
	if h := l.Healthy(); !errors.As(h, &we) {
		t.Fatalf("healthy while down: %v", h)
	}
	t.Logf("while down: %v", err)
	srv.Restart()
	if err := l.Record(ctx, call("after")); err != nil {
		t.Fatalf("record after restart: %v", err)
	}
	if h := l.Healthy(); h != nil {
		t.Fatalf("healthy after restart: %v", h)
	}
	rep := mustVerify(t, l)
	if rep.Rows != 6 {
		t.Fatalf("rows %d, want 6 (the call during the outage is not on record)", rep.Rows)
	}
	if evs, _ := l.Query(ctx, audit.Filter{CallID: "during"}); len(evs) != 0 {
		t.Fatalf("the refused row is on record: %+v", evs)
	}
}

const childEnv = "RIGOUT_PGTEST_CHILD_DSN"

// TestChildWriter is the writer process of TestKill9LosesNothingAcknowledged:
// it records events as fast as it can with 8 callers and prints each call
// ID once Record has returned nil.
func TestChildWriter(t *testing.T) {
	dsn := os.Getenv(childEnv)
	if dsn == "" {
		t.Skip("helper process of TestKill9LosesNothingAcknowledged")
	}
	l, err := postgres.Open(context.Background(), postgres.Config{DSN: dsn, Gateway: "gw-child", ChainKey: testChainKey})
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for c := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				id := fmt.Sprintf("child-%d-%d", c, i)
				if err := l.Record(context.Background(), call(id)); err != nil {
					fmt.Println("ERR", err)
					os.Exit(1)
				}
				mu.Lock()
				fmt.Println("ACK", id)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
}

// A gateway process killed with SIGKILL mid-burst, while another writes
// the same chain, loses no row it acknowledged, and the chain verifies.
func TestKill9LosesNothingAcknowledged(t *testing.T) {
	srv := pgtest.Start(t)
	dsn := srv.CreateDB("crash")
	parent := open(t, dsn, "gw-parent", nil)
	cmd := exec.Command(os.Args[0], "-test.run=^TestChildWriter$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+dsn)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var parentAcked []string
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			id := fmt.Sprint("parent-", i)
			if err := parent.Record(context.Background(), call(id)); err != nil {
				t.Error(err)
				return
			}
			parentAcked = append(parentAcked, id)
		}
	}()
	var acked []string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		if id, ok := strings.CutPrefix(line, "ACK "); ok {
			acked = append(acked, id)
			if len(acked) == 400 {
				cmd.Process.Signal(syscall.SIGKILL)
			}
		} else if strings.HasPrefix(line, "ERR") {
			t.Fatalf("child: %s", line)
		}
	}
	cmd.Wait()
	close(stop)
	wg.Wait()
	if len(acked) < 400 {
		t.Fatalf("child acknowledged only %d rows before it ended", len(acked))
	}
	ctx := context.Background()
	rows, err := parent.QueryRows(ctx, audit.Filter{}, "")
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, r := range rows {
		have[r.CallID] = true
	}
	for _, id := range append(acked, parentAcked...) {
		if !have[id] {
			t.Fatalf("acknowledged row %s is missing", id)
		}
	}
	rep := mustVerify(t, parent)
	t.Logf("child acknowledged %d, parent %d; ledger holds %d rows %v", len(acked), len(parentAcked), rep.Rows, rep.Gateways)
	// The parent keeps writing after the crash.
	if err := parent.Record(ctx, call("after-crash")); err != nil {
		t.Fatal(err)
	}
	mustVerify(t, parent)
}
