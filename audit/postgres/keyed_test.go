package postgres_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/postgres"
	"github.com/rigout/rigout/audit/postgres/pgtest"
)

// forgeWithoutKey is a command that reached the database with ambient
// credentials but cannot read the chain key: it deletes every row of
// principal, renumbers and re-chains the rest (row hashes with
// audit.RowHash, links with link), and sets every gateway's head to the
// new tail with a MAC of its own making.
func forgeWithoutKey(t *testing.T, dsn, principal string, link func(prev, row [32]byte, gw string) [32]byte) {
	t.Helper()
	ctx := context.Background()
	ro, err := postgres.Open(ctx, postgres.Config{DSN: dsn, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := ro.QueryRows(ctx, audit.Filter{}, "")
	ro.Close()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := conn.Exec(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`DELETE FROM rigout_audit_events`)
	var prev, prevLink [32]byte
	var seq int64
	for _, r := range rows {
		if r.Principal == principal {
			continue
		}
		seq++
		e := r.Event
		e.Seq = seq
		h := audit.RowHash(&e, prev)
		lk := link(prevLink, h, r.Gateway)
		var exit any
		if e.ExitCode != nil {
			exit = int64(*e.ExitCode)
		}
		exec(`INSERT INTO rigout_audit_events (seq, time_ns, type, call_id, phase, principal, transport, remote_addr, session,
			tool, host, route, decision, rule, bypassed, exit_code, signal, duration_ns, stdout_bytes, stderr_bytes,
			truncated, status, error, args_digest, args, detail, gateway, prev_hash, row_hash, link)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30)`,
			e.Seq, e.Time.UnixNano(), e.Type, e.CallID, e.Phase, e.Principal, e.Transport, e.RemoteAddr, e.Session,
			e.Tool, e.Host, e.Route, string(e.Decision), e.Rule, e.Bypassed, exit, e.Signal, int64(e.Duration),
			e.StdoutBytes, e.StderrBytes, e.Truncated, string(e.Status), e.Error, e.ArgsDigest, e.Args, e.Detail,
			r.Gateway, prev[:], h[:], lk[:])
		prev, prevLink = h, lk
	}
	m := hmac.New(sha256.New, []byte("the attacker's own key, 32 bytes"))
	m.Write(prev[:])
	exec(`UPDATE rigout_audit_heads SET seq = $1, hash = $2, link = $3, mac = $4`, seq, prev[:], prevLink[:], m.Sum(nil))
}

// unkeyedLink is the link of the unkeyed chain, as the schema's first
// version documents it.
func unkeyedLink(prev, row [32]byte, gw string) [32]byte {
	return sha256.Sum256(append(append(append([]byte("rigout.audit.pg.link.v1\x00"), prev[:]...), row[:]...), gw...))
}

// TestRewriteWithoutKeyFailsVerify: a PostgreSQL ledger rewritten by
// someone who can write the database but not read the chain key fails
// Verify at its first forged row, and a gateway still running records the
// forged tail as a mismatch instead of adopting it.
func TestRewriteWithoutKeyFailsVerify(t *testing.T) {
	srv := pgtest.Start(t)
	attackerKey := []byte("the attacker's own key, 32 bytes")
	tests := []struct {
		name     string
		link     func(prev, row [32]byte, gw string) [32]byte
		wantKind postgres.TamperKind
	}{
		{"unkeyed links", unkeyedLink, postgres.TamperUnkeyed},
		{"links keyed with another key", func(prev, row [32]byte, gw string) [32]byte {
			m := hmac.New(sha256.New, attackerKey)
			m.Write([]byte("rigout.audit.pg.keyed-link.v1\x00"))
			m.Write(prev[:])
			m.Write(row[:])
			m.Write([]byte(gw))
			return [32]byte(m.Sum(nil))
		}, postgres.TamperEdited},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			dsn := srv.CreateDB("forged" + string(rune('a'+i)))
			gw := open(t, dsn, "gw-a", nil)
			other := open(t, dsn, "gw-b", nil)
			for j := range 12 {
				e := call("c" + string(rune('a'+j)))
				e.Principal = "alice"
				if j%3 == 1 {
					e.Principal = "mallory"
				}
				l := gw
				if j%2 == 1 {
					l = other
				}
				if err := l.Record(ctx, e); err != nil {
					t.Fatal(err)
				}
			}
			deny := call("refused")
			deny.Principal, deny.Decision, deny.Status = "mallory", audit.DecisionDeny, audit.StatusDenied
			if err := gw.Record(ctx, deny); err != nil {
				t.Fatal(err)
			}
			if rep := mustVerify(t, gw); rep.KeyedFrom != 1 || rep.KeyID != audit.ChainKeyID(testChainKey) {
				t.Fatalf("before the rewrite: %+v", rep)
			}

			forgeWithoutKey(t, dsn, "mallory", tt.link)
			ro := open(t, dsn, "", func(c *postgres.Config) { c.ReadOnly = true })
			if rows, _ := ro.QueryRows(ctx, audit.Filter{Principal: "mallory"}, ""); len(rows) != 0 {
				t.Fatalf("%d rows of mallory survived the rewrite", len(rows))
			}
			_, err := ro.Verify(ctx)
			te, ok := err.(*postgres.TamperError)
			if !ok || te.Seq != 1 || te.Kind != tt.wantKind {
				t.Fatalf("Verify of the forged ledger = %v, want seq 1 %s", err, tt.wantKind)
			}

			// The running gateway writes on and records the forgery.
			if err := gw.Record(ctx, call("after")); err != nil {
				t.Fatal(err)
			}
			mm, err := ro.QueryRows(ctx, audit.Filter{Type: audit.TypeHeadMismatch}, "")
			// It finds its own rows gone from the end, and a tail not
			// linked under the key.
			var found []string
			for _, m := range mm {
				found = append(found, m.Detail)
			}
			if err != nil || len(mm) != 2 || !strings.Contains(found[0], `"found":"truncated"`) || !strings.Contains(found[1], `"found":"unkeyed"`) {
				t.Fatalf("mismatches after the gateway wrote on = %q, %v", found, err)
			}
			if _, err := ro.Verify(ctx); err == nil {
				t.Fatal("Verify passed once the gateway wrote after the forged tail")
			}
		})
	}
}

// TestChainKeyRequired: a writer needs a chain key (or the unsafe
// database-held one), a reader without one cannot check keyed rows, and a
// head updated by hand fails Verify.
func TestChainKeyRequired(t *testing.T) {
	srv := pgtest.Start(t)
	dsn := srv.CreateDB("keyreq")
	ctx := context.Background()
	if _, err := postgres.Open(ctx, postgres.Config{DSN: dsn, Gateway: "gw"}); err == nil || !strings.Contains(err.Error(), "ChainKey is required") {
		t.Fatalf("Open without a chain key = %v", err)
	}
	if _, err := postgres.Open(ctx, postgres.Config{DSN: dsn, Gateway: "gw", ChainKey: []byte("short")}); err == nil {
		t.Fatal("Open accepted a 5-byte chain key")
	}
	l := open(t, dsn, "gw", nil)
	for _, id := range []string{"a", "b", "c"} {
		if err := l.Record(ctx, call(id)); err != nil {
			t.Fatal(err)
		}
	}
	mustVerify(t, l)
	nokey := open(t, dsn, "", func(c *postgres.Config) { c.ReadOnly, c.ChainKey = true, nil })
	if _, err := nokey.Verify(ctx); err == nil || err.(*postgres.TamperError).Kind != postgres.TamperKeyUnknown {
		t.Fatalf("Verify without the key = %v", err)
	}
	unsafe := open(t, dsn, "", func(c *postgres.Config) { c.ReadOnly, c.ChainKey, c.UnsafeChainKeyInDatabase = true, nil, true })
	if _, err := unsafe.Verify(ctx); err == nil {
		t.Fatal("Verify with the database-held key passed a chain keyed with another key")
	}

	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `UPDATE rigout_audit_heads SET mac = $1`, bytes.Repeat([]byte{1}, 32)); err != nil {
		t.Fatal(err)
	}
	_, err = l.Verify(ctx)
	if te, ok := err.(*postgres.TamperError); !ok || te.Kind != postgres.TamperUnkeyed || te.Seq != 3 {
		t.Fatalf("Verify with a head MAC set by hand = %v", err)
	}
}

// TestOpenKeysOnlyWhatPredatesKeying: a gateway that opens a ledger of
// schema version 1 (unkeyed links) keys it from an audit.chain_key row and
// the older rows still verify; one that opens a keyed ledger rewritten
// without the key records the forgery instead of keying the forged chain.
func TestOpenKeysOnlyWhatPredatesKeying(t *testing.T) {
	srv := pgtest.Start(t)
	ctx := context.Background()
	for _, legacy := range []bool{true, false} {
		name := map[bool]string{true: "schema 1", false: "forged"}[legacy]
		t.Run(name, func(t *testing.T) {
			db := map[bool]string{true: "legacy", false: "forgedopen"}[legacy]
			dsn := srv.CreateDB(db)
			gw := open(t, dsn, "gw-a", nil)
			for _, id := range []string{"a", "b", "c", "d"} {
				e := call(id)
				e.Principal = "alice"
				if id == "c" {
					e.Principal = "mallory"
				}
				if err := gw.Record(ctx, e); err != nil {
					t.Fatal(err)
				}
			}
			gw.Close()
			principal := "mallory"
			if legacy {
				// As version 1 wrote it: unkeyed links, heads without a MAC.
				principal = "nobody"
			}
			forgeWithoutKey(t, dsn, principal, unkeyedLink)
			if legacy {
				srv.Psql(db, `ALTER TABLE rigout_audit_heads DROP COLUMN link; ALTER TABLE rigout_audit_heads DROP COLUMN mac;
					UPDATE rigout_meta SET value = '1' WHERE key = 'schema_version'`)
			}
			l := open(t, dsn, "gw-b", nil)
			if err := l.Record(ctx, call("after")); err != nil {
				t.Fatal(err)
			}
			ck, _ := l.QueryRows(ctx, audit.Filter{Type: audit.TypeChainKey}, "")
			mm, _ := l.QueryRows(ctx, audit.Filter{Type: audit.TypeHeadMismatch}, "")
			rep, err := l.Verify(ctx)
			if legacy {
				if len(ck) != 1 || ck[0].Seq != 5 || len(mm) != 0 || err != nil || rep.KeyedFrom != 5 {
					t.Fatalf("legacy ledger: chain key rows %d, mismatches %d, verify %+v, %v", len(ck), len(mm), rep, err)
				}
				return
			}
			if len(ck) != 0 || len(mm) != 1 || !strings.Contains(mm[0].Detail, `"found":"unkeyed"`) {
				t.Fatalf("forged ledger: %d chain key rows, mismatches %+v", len(ck), mm)
			}
			if te, ok := err.(*postgres.TamperError); !ok || te.Seq != 1 || te.Kind != postgres.TamperUnkeyed {
				t.Fatalf("Verify of the forged ledger after a gateway opened it = %v", err)
			}
		})
	}
}

// A password pgx would find on its own (PGPASSWORD, a password file) is
// refused: the commands the gateway runs could read it too. One given in
// Config.Password is used, and UnsafeAmbientCredentials lets the ambient
// one through.
func TestAmbientCredentialsRefused(t *testing.T) {
	srv := pgtest.Start(t)
	dsn := srv.CreateDB("ambient")
	ctx := context.Background()
	passfile := t.TempDir() + "/pgpass"
	if err := os.WriteFile(passfile, []byte("*:*:*:*:from-the-passfile\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		env     [2]string
		mod     func(*postgres.Config)
		refused bool
	}{
		{"PGPASSWORD", [2]string{"PGPASSWORD", "from-the-environment"}, nil, true},
		{"password file", [2]string{"PGPASSFILE", passfile}, nil, true},
		{"password file, password given", [2]string{"PGPASSFILE", passfile}, func(c *postgres.Config) { c.Password = "given" }, false},
		{"PGPASSWORD, unsafe", [2]string{"PGPASSWORD", "from-the-environment"}, func(c *postgres.Config) { c.UnsafeAmbientCredentials = true }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(tt.env[0], tt.env[1])
			cfg := postgres.Config{DSN: dsn, Gateway: "gw", ChainKey: testChainKey}
			if tt.mod != nil {
				tt.mod(&cfg)
			}
			l, err := postgres.Open(ctx, cfg)
			if err == nil {
				l.Close()
			}
			switch {
			case !tt.refused && err != nil:
				t.Fatalf("Open = %v", err)
			case tt.refused && (err == nil || !strings.Contains(err.Error(), "PGPASSWORD, a password file")):
				t.Fatalf("Open = %v, want the ambient password refused", err)
			}
		})
	}
}
