package assembly_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rigout/rigout/assembly"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/postgres"
	"github.com/rigout/rigout/audit/postgres/pgtest"
	"github.com/rigout/rigout/auth/pgstore"
	"github.com/rigout/rigout/config"
)

// TestDoctorPostgres runs the doctor's checks of a ledger and OAuth state
// kept on a real PostgreSQL server: a database with no ledger yet, one
// with a ledger whose chain holds, the same after a row is edited, the
// OAuth tables before and after a gateway creates them, and a server
// that does not answer. No state directory exists: a PostgreSQL ledger
// does not live there.
func TestDoctorPostgres(t *testing.T) {
	srv := pgtest.Start(t)
	ctx := context.Background()
	const keyEnv = "RIGOUT_TEST_DOCTOR_KEY"
	key := strings.Repeat("5a", 32)
	getenv := func(k string) string {
		if k == keyEnv {
			return key
		}
		return ""
	}
	doctor := func(t *testing.T, dsn string) []assembly.Finding {
		t.Helper()
		tmp := t.TempDir()
		cfg := assembly.DoctorConfig{
			StateDir:   filepath.Join(tmp, "state"),
			ConfigPath: filepath.Join(tmp, "rigout.json"),
			KnownHosts: filepath.Join(tmp, "known_hosts"),
			SSHConfig:  filepath.Join(tmp, "ssh_config"),
			Executable: filepath.Join(tmp, "rigout"),
			Getenv:     getenv,
		}
		body := fmt.Sprintf(`{"audit": {"postgres": %q, "gateway": "gw-a", "key_env": %q}, "oauth": {"consent": true}}`, dsn, keyEnv)
		if err := os.WriteFile(cfg.ConfigPath, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return assembly.Doctor(ctx, cfg)
	}
	expect := func(t *testing.T, found []assembly.Finding, check string, status assembly.Status, detail, fix string) {
		t.Helper()
		for _, f := range found {
			if f.Check == check {
				if f.Status != status || !strings.Contains(f.Detail, detail) || !strings.Contains(f.Fix, fix) {
					t.Errorf("%s: %s %q (fix %q), want %s with %q (fix %q)", check, f.Status, f.Detail, f.Fix, status, detail, fix)
				}
				return
			}
		}
		t.Errorf("no %s finding; findings:\n%s", check, dump(found))
	}

	dsn := srv.CreateDB("doctor")
	found := doctor(t, dsn)
	expect(t, found, "audit ledger", assembly.StatusOK, "no ledger yet", "")
	expect(t, found, "OAuth state", assembly.StatusOK, "no OAuth tables yet", "")

	// A gateway's ledger with rows in it, and its OAuth tables.
	pcfg, err := assembly.PostgresConfig(config.Audit{Postgres: dsn, Gateway: "gw-a", KeyEnv: keyEnv}, getenv, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	l, err := postgres.Open(ctx, pcfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		ev := audit.Event{Type: audit.TypeToolCall, Phase: audit.PhaseIntent, CallID: fmt.Sprint(i), Principal: "ci",
			Tool: "execute_command", Host: "local", Status: audit.StatusStarted}
		if err := l.Record(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	expect(t, doctor(t, dsn), "OAuth state", assembly.StatusOK, "no OAuth tables yet", "")
	st, err := pgstore.Open(ctx, pgstore.Config{DSN: dsn, Secret: []byte(key)})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	found = doctor(t, dsn)
	expect(t, found, "audit ledger", assembly.StatusOK, "3 rows from 1 gateway(s), chain intact", "")
	expect(t, found, "OAuth state", assembly.StatusOK, "OAuth schema version", "")

	srv.Psql("doctor", `UPDATE rigout_audit_events SET principal = 'someone-else' WHERE seq = 2`)
	expect(t, doctor(t, dsn), "audit ledger", assembly.StatusFail, "hash chain broken", "rigout audit verify --json")

	// Nothing listens on a loopback port just freed.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	found = doctor(t, "postgres://postgres@"+ln.Addr().String()+"/postgres?sslmode=disable&connect_timeout=5")
	expect(t, found, "audit ledger", assembly.StatusFail, "PostgreSQL: ", "pg_isready")
	expect(t, found, "OAuth state", assembly.StatusFail, "", "audit.postgres")
}
