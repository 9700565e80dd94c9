package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout/assembly"
	"github.com/rigout/rigout/audit/postgres/pgtest"
	"github.com/rigout/rigout/config"
)

// testChainKeyEnv holds the chain key of the tests' PostgreSQL ledgers
// (set by TestMain).
const testChainKeyEnv = "RIGOUT_TEST_CHAIN_KEY"

func writePGConfig(t *testing.T, dir, dsn, gateway string) string {
	t.Helper()
	p := filepath.Join(dir, "rigout.json")
	body := fmt.Sprintf(`{"audit": {"store_args": true, "postgres": %q, "gateway": %q, "key_env": %q}}`, dsn, gateway, testChainKeyEnv)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// burst runs 4 clients calling execute_command against url until ctx ends
// and returns the markers of the calls that were acknowledged.
func burst(ctx context.Context, url, token, prefix string, count *atomic.Int64) []string {
	var mu sync.Mutex
	var acked []string
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			c, err := dialHTTP(ctx, url, token, mcp.LATEST_PROTOCOL_VERSION)
			if err != nil {
				return
			}
			defer c.Close()
			for i := 0; ctx.Err() == nil; i++ {
				marker := fmt.Sprintf("%s-%d-%d", prefix, w, i)
				var req mcp.CallToolRequest
				req.Params.Name = "execute_command"
				req.Params.Arguments = map[string]any{"argv": []string{"echo", marker}}
				res, err := c.CallTool(ctx, req)
				if err != nil || res.IsError {
					return
				}
				mu.Lock()
				acked = append(acked, marker)
				mu.Unlock()
				count.Add(1)
			}
		})
	}
	wg.Wait()
	return acked
}

// Two real `rigout serve` processes keep one ledger on a real PostgreSQL
// server: one is killed with SIGKILL mid-burst while the other keeps
// serving; every acknowledged call of both has its done row, naming its
// gateway; `rigout audit verify` passes, and fails naming the row after an
// UPDATE through psql; `rigout doctor` reports the ledger.
func TestTwoGatewaysSharePostgresLedger(t *testing.T) {
	if testing.Short() {
		t.Skip("PostgreSQL end-to-end test skipped in -short mode")
	}
	srv := pgtest.Start(t)
	dsn := srv.CreateDB("shared")
	const token = "pg-test-token-0123456789abcdef012"
	var cfgs []string
	var urls []string
	var cmds []*exec.Cmd
	for _, gw := range []string{"gw-a", "gw-b"} {
		dir := t.TempDir()
		cfg := writePGConfig(t, dir, dsn, gw)
		cmd, url, _ := startServeEnv(t, []string{"RIGOUT_AUTH_TOKEN=" + token, "RIGOUT_STATE_DIR=" + dir}, "--config", cfg, "--no-ssh")
		cfgs, urls, cmds = append(cfgs, cfg), append(urls, url), append(cmds, cmd)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(cfgs[0]), "audit.db")); err == nil {
		t.Fatal("a SQLite ledger was created although the config names PostgreSQL")
	}
	ctxA, stopA := context.WithCancel(context.Background())
	defer stopA()
	ctxB, stopB := context.WithCancel(context.Background())
	defer stopB()
	var ackedA, ackedB []string
	var nA, nB atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() { ackedA = burst(ctxA, urls[0], token, "a", &nA) })
	wg.Go(func() { ackedB = burst(ctxB, urls[1], token, "b", &nB) })
	// Each gateway has acknowledged calls when gw-a is killed mid-burst,
	// and gw-b acknowledges more after: counted, not timed.
	atLeast := func(n *atomic.Int64, want int64) {
		for deadline := time.Now().Add(60 * time.Second); n.Load() < want; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("only %d calls acknowledged in 60 s, want %d", n.Load(), want)
			}
		}
	}
	atLeast(&nA, 5)
	atLeast(&nB, 5)
	if err := cmds[0].Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmds[0].Wait()
	stopA()
	atLeast(&nB, nB.Load()+5)
	stopB()
	wg.Wait()
	if len(ackedA) == 0 || len(ackedB) == 0 {
		t.Fatalf("acknowledged: gw-a %d, gw-b %d; the test did not exercise both gateways", len(ackedA), len(ackedB))
	}
	for gw, acked := range map[string][]string{"gw-a": ackedA, "gw-b": ackedB} {
		have := map[string]bool{}
		for _, line := range strings.Split(srv.Psql("shared", fmt.Sprintf(
			`SELECT args FROM rigout_audit_events WHERE phase = 'done' AND tool = 'execute_command' AND gateway = '%s'`, gw)), "\n") {
			if i := strings.Index(line, `"`+gw[3:]+"-"); i >= 0 {
				have[strings.Trim(strings.Fields(line[i:])[0], `"],}`)] = true
			}
		}
		for _, m := range acked {
			if !have[m] {
				t.Fatalf("%s: acknowledged call %s has no done row of its gateway (%d done rows)", gw, m, len(have))
			}
		}
		t.Logf("%s: %d acknowledged calls, all with their done row", gw, len(acked))
	}

	code, out, errOut := runAuditT(t, "verify", "--config", cfgs[1])
	if code != 0 || !strings.Contains(out, "ok: the chain is intact") || !strings.Contains(out, "gateway:   gw-a") || !strings.Contains(out, "gateway:   gw-b") ||
		!strings.Contains(out, "rows from seq 1 linked under it") {
		t.Fatalf("audit verify: %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runAuditT(t, "query", "--config", cfgs[1], "--tool", "execute_command", "--limit", "3", "--json")
	if code != 0 || strings.Count(out, "\n") != 3 {
		t.Fatalf("audit query: %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut = runAuditT(t, "stats", "--config", cfgs[1]); code != 0 || !strings.Contains(out, "execute_command") {
		t.Fatalf("audit stats: %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut = runAuditT(t, "tail", "--config", cfgs[1], "-n", "2"); code != 0 || strings.Count(out, "\n") < 2 {
		t.Fatalf("audit tail: %d\n%s%s", code, out, errOut)
	}
	exp := filepath.Join(t.TempDir(), "export.jsonl")
	if code, _, errOut = runAuditT(t, "export", "--config", cfgs[1], "--out", exp); code != 0 || !strings.Contains(errOut, "exported") {
		t.Fatalf("audit export: %d %s", code, errOut)
	}
	if b, _ := os.ReadFile(exp); !strings.Contains(string(b), `"gateway":"gw-a"`) {
		t.Fatalf("export lacks gateway names: %.300s", b)
	}
	if code, _, errOut = runAuditT(t, "prune", "--config", cfgs[1], "--before", "1d"); code != 2 || !strings.Contains(errOut, "not offered") {
		t.Fatalf("audit prune on PostgreSQL: %d %s", code, errOut)
	}

	var doc strings.Builder
	if code := runDoctor(context.Background(), []string{"--config", cfgs[1], "--state-dir", filepath.Dir(cfgs[1])}, &doc, &doc); !strings.Contains(doc.String(), "PostgreSQL 127.0.0.1") || !strings.Contains(doc.String(), "chain intact") {
		t.Fatalf("doctor (exit %d):\n%s", code, doc.String())
	}

	seq := srv.Psql("shared", `SELECT min(seq) + 7 FROM rigout_audit_events`)
	srv.Psql("shared", `UPDATE rigout_audit_events SET principal = 'nobody' WHERE seq = `+seq)
	code, out, _ = runAuditT(t, "verify", "--config", cfgs[1])
	if code != 1 || !strings.Contains(out, "FAILED at seq "+seq+": edited") {
		t.Fatalf("audit verify after tampering with seq %s: %d\n%s", seq, code, out)
	}
}

// The database stopped under a running gateway: calls that change
// something are refused with a clear error, and served again once it is
// back.
func TestPostgresOutageFailsClosed(t *testing.T) {
	if testing.Short() {
		t.Skip("PostgreSQL end-to-end test skipped in -short mode")
	}
	srv := pgtest.Start(t)
	dir := t.TempDir()
	cfg := writePGConfig(t, dir, srv.CreateDB("outage"), "gw-a")
	const token = "pg-test-token-0123456789abcdef012"
	_, url, _ := startServeEnv(t, []string{"RIGOUT_AUTH_TOKEN=" + token, "RIGOUT_STATE_DIR=" + dir}, "--config", cfg, "--no-ssh")
	c := httpClient(t, url, token, mcp.LATEST_PROTOCOL_VERSION)
	// Not in the state directory, which commands cannot see.
	work := t.TempDir()
	echo := func(marker string) *mcp.CallToolResult {
		return call(t, c, "execute_command", map[string]any{"argv": []string{"sh", "-c", "echo " + marker + " >> " + filepath.Join(work, "ran")}})
	}
	if res := echo("before"); res.IsError {
		t.Fatalf("before the outage: %s", resultText(res))
	}
	srv.Stop()
	res := echo("during")
	if !res.IsError || !strings.Contains(strings.ToLower(resultText(res)), "audit") {
		t.Fatalf("during the outage the call was not refused for the audit: %s", resultText(res))
	}
	t.Logf("during the outage: %s", resultText(res))
	srv.Restart()
	if res := echo("after"); res.IsError {
		t.Fatalf("after the outage: %s", resultText(res))
	}
	ran, _ := os.ReadFile(filepath.Join(work, "ran"))
	if string(ran) != "before\nafter\n" {
		t.Fatalf("commands that ran: %q; the one during the outage must not have", ran)
	}
}

func TestPostgresConfigRefusesPasswordInFile(t *testing.T) {
	for _, dsn := range []string{
		"postgres://rigout:hunter2@db:5432/rigout",
		"postgres://rigout@db/rigout?password=hunter2",
		"host=db user=rigout password=hunter2 dbname=rigout",
	} {
		if _, err := assembly.PostgresConfig(config.Audit{Postgres: dsn}, os.Getenv, true, nil); err == nil || !strings.Contains(err.Error(), "password_env") {
			t.Errorf("%s: %v", dsn, err)
		}
	}
	if _, err := assembly.PostgresConfig(config.Audit{Postgres: "postgres://rigout@db:5432/rigout?sslmode=verify-full"}, os.Getenv, true, nil); err != nil {
		t.Error(err)
	}
	c := &common{file: &config.File{Audit: config.Audit{Postgres: "postgres://rigout@db/rigout", PasswordEnv: "RIGOUT_TEST_UNSET_PW", KeyEnv: testChainKeyEnv}}}
	if _, err := c.postgresConfig(false, nil); err == nil || !strings.Contains(err.Error(), "RIGOUT_TEST_UNSET_PW") {
		t.Errorf("unset password_env: %v", err)
	}
	t.Setenv("RIGOUT_TEST_PW", "s3cret")
	c.file.Audit.PasswordEnv = "RIGOUT_TEST_PW"
	if cfg, err := c.postgresConfig(false, nil); err != nil || cfg.Password != "s3cret" {
		t.Errorf("password_env: %+v %v", cfg, err)
	}
}

// The PostgreSQL ledger's chain key comes from the variable key_env
// names; without one (and without the unsafe database-held key) the
// gateway does not start, and a key too short or not hex is refused.
func TestPostgresConfigChainKey(t *testing.T) {
	t.Setenv("RIGOUT_TEST_KEY_SHORT", "abcd")
	t.Setenv("RIGOUT_TEST_KEY_NOTHEX", strings.Repeat("zz", 32))
	tests := []struct {
		name    string
		a       config.Audit
		wantErr string // "" for success
		wantKey bool
	}{
		{"no key", config.Audit{}, `"key_env"`, false},
		{"key", config.Audit{KeyEnv: testChainKeyEnv}, "", true},
		{"unset variable", config.Audit{KeyEnv: "RIGOUT_TEST_KEY_UNSET"}, "RIGOUT_TEST_KEY_UNSET, which is not set", false},
		{"too short", config.Audit{KeyEnv: "RIGOUT_TEST_KEY_SHORT"}, "64 or more hex digits", false},
		{"not hex", config.Audit{KeyEnv: "RIGOUT_TEST_KEY_NOTHEX"}, "64 or more hex digits", false},
		{"unsafe database-held key", config.Audit{UnsafeChainKeyInDatabase: true}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.a.Postgres = "postgres://rigout@db/rigout"
			c := &common{file: &config.File{Audit: tt.a}}
			cfg, err := c.postgresConfig(false, nil)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("postgresConfig: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("postgresConfig = %v, want an error with %q", err, tt.wantErr)
			case (cfg.ChainKey != nil) != tt.wantKey:
				t.Fatalf("chain key %x, want one: %v", cfg.ChainKey, tt.wantKey)
			}
		})
	}
}

// rawProtocol is the protocol version the raw requests below speak: the
// last one with the initialize handshake and sessions.
const rawProtocol = "2025-06-18"

// initReq is an initialize request in rawProtocol.
func initReq() string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"lb-test","version":"1"}}}`, rawProtocol)
}

// post sends one JSON-RPC request to url and returns the status, the
// Mcp-Session-Id header and the body.
func post(t *testing.T, url, token, session, body string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", rawProtocol)
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), string(b)
}

// Replicas behind a load balancer, sharing one PostgreSQL ledger. A
// streamable HTTP session lives on the gateway that created it: its
// Mcp-Session-Id is refused by the other replica with 404, which is why a
// load balancer must route by that header (sticky sessions). In stateless
// mode any replica serves any request, and both write the one ledger.
func TestReplicasStickyAndStateless(t *testing.T) {
	if testing.Short() {
		t.Skip("PostgreSQL end-to-end test skipped in -short mode")
	}
	srv := pgtest.Start(t)
	dsn := srv.CreateDB("replicas")
	const token = "pg-test-token-0123456789abcdef012"
	initReq := initReq()
	listReq := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	callReq := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"execute_command","arguments":{"argv":["echo","replica"]}}}`
	serve := func(gw string, extra ...string) string {
		dir := t.TempDir()
		cfg := writePGConfig(t, dir, dsn, gw)
		_, url, _ := startServeEnv(t, []string{"RIGOUT_AUTH_TOKEN=" + token, "RIGOUT_STATE_DIR=" + dir},
			append([]string{"--config", cfg, "--no-ssh"}, extra...)...)
		return url
	}
	a, b := serve("gw-a"), serve("gw-b")
	status, session, body := post(t, a, token, "", initReq)
	if status != http.StatusOK || session == "" {
		t.Fatalf("initialize on gw-a: %d %q %s", status, session, body)
	}
	if status, _, body := post(t, a, token, session, listReq); status != http.StatusOK || !strings.Contains(body, "execute_command") {
		t.Fatalf("tools/list on the session's own gateway: %d %s", status, body)
	}
	if status, _, body := post(t, b, token, session, listReq); status != http.StatusNotFound {
		t.Fatalf("tools/list with gw-a's session on gw-b: %d %s, want 404 (the client must re-initialize there)", status, body)
	}

	sa, sb := serve("gw-sa", "--stateless"), serve("gw-sb", "--stateless")
	for _, url := range []string{sa, sb, sa} {
		if status, _, body := post(t, url, token, "", callReq); status != http.StatusOK || !strings.Contains(body, `"exit_code":0`) {
			t.Fatalf("stateless tools/call on %s: %d %s", url, status, body)
		}
	}
	got := srv.Psql("replicas", `SELECT gateway, count(*) FROM rigout_audit_events WHERE tool = 'execute_command' AND phase = 'done' GROUP BY gateway ORDER BY gateway`)
	if got != "gw-sa|2\ngw-sb|1" {
		t.Fatalf("done rows per gateway:\n%s", got)
	}
}

// The database password comes from the variable password_env names: with
// it, rigout serve records to the ledger (and commands do not see the
// variable); without it, it refuses to start and says which variable is
// missing; a wrong one is refused by the server.
func TestPostgresPasswordFromEnvironment(t *testing.T) {
	if testing.Short() {
		t.Skip("PostgreSQL end-to-end test skipped in -short mode")
	}
	srv := pgtest.Start(t)
	dsn := srv.CreateDB("pw")
	srv.RequirePassword("correct horse")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "rigout.json")
	body := fmt.Sprintf(`{"audit": {"postgres": %q, "password_env": "PG_AUDIT_TEST_PASSWORD", "gateway": "gw-pw", "key_env": %q}}`, dsn, testChainKeyEnv)
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	const token = "pg-test-token-0123456789abcdef012"
	run := func(pw string) (int, string) {
		cmd := exec.Command(rigoutBinary(t), "serve", "--addr", "127.0.0.1:0", "--config", cfg, "--no-ssh")
		cmd.Env = append(os.Environ(), "RIGOUT_STATE_DIR="+dir, "RIGOUT_AUTH_TOKEN="+token)
		if pw != "" {
			cmd.Env = append(cmd.Env, "PG_AUDIT_TEST_PASSWORD="+pw)
		}
		out, _ := cmd.CombinedOutput()
		return cmd.ProcessState.ExitCode(), string(out)
	}
	if code, out := run(""); code == 0 || !strings.Contains(out, "PG_AUDIT_TEST_PASSWORD") {
		t.Fatalf("without the password variable: exit %d\n%s", code, out)
	}
	if code, out := run("wrong"); code == 0 || !strings.Contains(out, "password authentication failed") {
		t.Fatalf("with a wrong password: exit %d\n%s", code, out)
	}
	_, url, _ := startServeEnv(t, []string{"RIGOUT_AUTH_TOKEN=" + token, "RIGOUT_STATE_DIR=" + dir, "PG_AUDIT_TEST_PASSWORD=correct horse"}, "--config", cfg, "--no-ssh")
	status, session, body := post(t, url, token, "", initReq())
	if status != http.StatusOK {
		t.Fatalf("initialize: %d %s", status, body)
	}
	// The variable is moved off the environment with the other secrets:
	// commands never see it.
	status, _, body = post(t, url, token, session, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"execute_command","arguments":{"argv":["env"]}}}`)
	if status != http.StatusOK || !strings.Contains(body, `"exit_code":0`) || strings.Contains(body, "PG_AUDIT_TEST_PASSWORD") {
		t.Fatalf("env through execute_command: %d %s", status, body)
	}
	if n := srv.Psql("pw", `SELECT count(*) FROM rigout_audit_events WHERE gateway = 'gw-pw' AND type = 'server.start'`); n != "1" {
		t.Fatalf("server.start rows of gw-pw: %s", n)
	}
	t.Setenv("PG_AUDIT_TEST_PASSWORD", "correct horse")
	if code, out, errOut := runAuditT(t, "verify", "--config", cfg); code != 0 {
		t.Fatalf("audit verify with the password: %d\n%s%s", code, out, errOut)
	}
}
