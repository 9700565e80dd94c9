package pgstore_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rigout/rigout/audit/postgres/pgtest"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/auth/pgstore"
)

// testSecret is the server secret every gateway of these tests shares.
var testSecret = []byte("rigout pgstore test secret, 32 b")

func open(t testing.TB, dsn string) *pgstore.Store {
	t.Helper()
	s, err := pgstore.Open(context.Background(), pgstore.Config{DSN: dsn, Gateway: "test", Secret: testSecret})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func digest(s string) auth.Digest { return auth.DigestOf(s) }

// Gateways opening the store at once migrate once; a database whose OAuth
// schema is newer than this build is refused; the audit ledger's
// rigout_meta is shared, not replaced.
func TestOpenMigratesOnceAndRefusesNewerSchema(t *testing.T) {
	srv := pgtest.Start(t)
	dsn := srv.CreateDB("migrate")
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			s, err := pgstore.Open(context.Background(), pgstore.Config{DSN: dsn, Secret: testSecret})
			if err == nil {
				s.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("concurrent open: %v", err)
		}
	}
	if got := srv.Psql("migrate", `SELECT value FROM rigout_meta WHERE key = 'oauth_schema_version'`); got != fmt.Sprint(pgstore.SchemaVersion) {
		t.Fatalf("schema version %q", got)
	}
	srv.Psql("migrate", `UPDATE rigout_meta SET value = '99' WHERE key = 'oauth_schema_version'`)
	_, err := pgstore.Open(context.Background(), pgstore.Config{DSN: dsn, Secret: testSecret})
	var sv *pgstore.SchemaVersionError
	if !errors.As(err, &sv) || sv.Found != 99 || sv.Max != pgstore.SchemaVersion {
		t.Fatalf("newer schema: %v", err)
	}
}

// Rotations of one refresh token raced by 8 callers (gateways) succeed
// exactly once; every other caller finds it used, and the grant is gone.
func TestRotateRaceOnce(t *testing.T) {
	srv := pgtest.Start(t)
	dsn := srv.CreateDB("rotate")
	now := time.Now()
	first := auth.Tokens{Access: digest("a0"), Refresh: digest("r0"), AccessExpires: now.Add(time.Hour), RefreshExpires: now.Add(time.Hour)}
	setup := open(t, dsn)
	if err := setup.CreateGrant(context.Background(), auth.Grant{ID: "g1", ClientID: "cli", Scopes: auth.FullScopes(), Resource: "r"}, digest("code"), first, now, 10); err != nil {
		t.Fatal(err)
	}
	results := make([]auth.RotateResult, 8)
	var wg sync.WaitGroup
	for i := range results {
		s := open(t, dsn)
		wg.Go(func() {
			next := auth.Tokens{Access: digest("a" + string(rune('1'+i))), Refresh: digest("r" + string(rune('1'+i))), AccessExpires: now.Add(time.Hour), RefreshExpires: now.Add(time.Hour)}
			_, res, err := s.Rotate(context.Background(), first.Refresh, "cli", now, next)
			if err != nil {
				t.Error(err)
			}
			results[i] = res
		})
	}
	wg.Wait()
	ok, reused := 0, 0
	for _, r := range results {
		switch r {
		case auth.RotateOK:
			ok++
		case auth.RotateReused:
			reused++
		}
	}
	// The first rotation wins; the first loser revokes the grant, and the
	// losers after it may find the token already gone with the grant.
	if ok != 1 || reused < 1 {
		t.Fatalf("results %v: want one RotateOK and at least one RotateReused", results)
	}
	if live, err := setup.GrantLive(context.Background(), "g1", now); err != nil || live {
		t.Fatalf("grant live after the reuse: %v %v", live, err)
	}
}

// BenchmarkAccess is the hot path: one access-token check, in memory and
// on a local PostgreSQL (fsync off; reads do not fsync anyway).
func BenchmarkAccess(b *testing.B) {
	now := time.Now()
	toks := auth.Tokens{Access: digest("access"), Refresh: digest("refresh"), AccessExpires: now.Add(time.Hour), RefreshExpires: now.Add(time.Hour)}
	g := auth.Grant{ID: "g", ClientID: "cli", Scopes: auth.FullScopes(), Resource: "r"}
	run := func(b *testing.B, s auth.OAuthStore) {
		if err := s.CreateGrant(context.Background(), g, digest("code"), toks, now, 10); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for b.Loop() {
			if _, _, ok, err := s.Access(context.Background(), toks.Access); !ok || err != nil {
				b.Fatal(ok, err)
			}
		}
	}
	b.Run("memory", func(b *testing.B) { run(b, auth.NewMemoryStore()) })
	b.Run("postgres", func(b *testing.B) {
		srv := pgtest.Start(b)
		run(b, open(b, srv.CreateDB("bench")))
	})
}

// A command that reached the database with ambient credentials cannot mint
// a token: an access-token row it inserts with the token's plain SHA-256
// digest (the form version 1 stored) does not authenticate, nor does one
// pointing at a grant it inserted, and a genuine token whose grant it
// widened or swapped stops authenticating instead of gaining the scopes.
// A store without a secret (and without the unsafe database-held one)
// does not open.
func TestHandInsertedRowsDoNotAuthenticate(t *testing.T) {
	srv := pgtest.Start(t)
	dsn := srv.CreateDB("forged")
	ctx := context.Background()
	now := time.Now()
	s := open(t, dsn)
	narrow := auth.Scopes{Tools: []string{"list_directory"}}
	genuine := auth.Tokens{Access: digest("genuine-access"), Refresh: digest("genuine-refresh"), AccessExpires: now.Add(time.Hour), RefreshExpires: now.Add(time.Hour)}
	if err := s.CreateGrant(ctx, auth.Grant{ID: "g1", ClientID: "cli", Scopes: narrow, Resource: "r"}, digest("code"), genuine, now, 10); err != nil {
		t.Fatal(err)
	}
	if g, _, ok, err := s.Access(ctx, genuine.Access); !ok || err != nil || g.ID != "g1" {
		t.Fatalf("genuine token: %+v %v %v", g, ok, err)
	}
	plain := func(tok string) string { return fmt.Sprintf("'\\x%x'::bytea", sha256.Sum256([]byte(tok))) }
	exp := fmt.Sprint(now.Add(time.Hour).UnixNano())
	tests := []struct {
		name  string
		sql   string
		token string // the access token then presented
	}{
		{"token row for a genuine grant",
			`INSERT INTO rigout_oauth_tokens (digest, grant_id, refresh, expires_ns) VALUES (` + plain("forged-1") + `, 'g1', false, ` + exp + `)`,
			"forged-1"},
		{"grant and token rows",
			`INSERT INTO rigout_oauth_grants (id, client_id, scopes, resource, gateway) VALUES ('g-forged', 'cli', '{"tools":["*"],"hosts":["*"],"bypass":true}', 'r', 'test');
			 INSERT INTO rigout_oauth_tokens (digest, grant_id, refresh, expires_ns) VALUES (` + plain("forged-2") + `, 'g-forged', false, ` + exp + `)`,
			"forged-2"},
		{"refresh token row", // presented as access too: it must not work either way
			`INSERT INTO rigout_oauth_tokens (digest, grant_id, refresh, expires_ns) VALUES (` + plain("forged-3") + `, 'g1', true, ` + exp + `)`,
			"forged-3"},
		{"genuine token, grant widened",
			`UPDATE rigout_oauth_grants SET scopes = '{"tools":["*"],"hosts":["*"],"bypass":true}' WHERE id = 'g1'`,
			"genuine-access"},
		{"genuine token moved to a forged grant",
			`INSERT INTO rigout_oauth_grants (id, client_id, scopes, resource, gateway, mac) SELECT 'g-wide', client_id, '{"tools":["*"]}', resource, gateway, mac FROM rigout_oauth_grants WHERE id = 'g1';
			 UPDATE rigout_oauth_tokens SET grant_id = 'g-wide' WHERE grant_id = 'g1'`,
			"genuine-access"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv.Psql("forged", tt.sql)
			if g, _, ok, err := s.Access(ctx, digest(tt.token)); ok || err != nil {
				t.Fatalf("a hand-written row authenticated: grant %+v, %v", g, err)
			}
			next := auth.Tokens{Access: digest("n-" + tt.token), Refresh: digest("nr-" + tt.token), AccessExpires: now.Add(time.Hour), RefreshExpires: now.Add(time.Hour)}
			if _, res, err := s.Rotate(ctx, digest(tt.token), "cli", now, next); res == auth.RotateOK || err != nil {
				t.Fatalf("a hand-written row rotated: %v %v", res, err)
			}
		})
	}

	if _, err := pgstore.Open(ctx, pgstore.Config{DSN: dsn}); err == nil {
		t.Error("Open without a secret succeeded")
	}
	if _, err := pgstore.Open(ctx, pgstore.Config{DSN: dsn, Secret: []byte("short")}); err == nil {
		t.Error("Open with a 5-byte secret succeeded")
	}
	// Another gateway with another secret accepts none of this one's tokens.
	other, err := pgstore.Open(ctx, pgstore.Config{DSN: dsn, Secret: []byte("another secret, also 32 bytes..."), UnsafeSecretInDatabase: false})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	fresh := auth.Tokens{Access: digest("fresh"), Refresh: digest("fresh-r"), AccessExpires: now.Add(time.Hour), RefreshExpires: now.Add(time.Hour)}
	if err := s.CreateGrant(ctx, auth.Grant{ID: "g2", ClientID: "cli", Scopes: narrow, Resource: "r"}, digest("code2"), fresh, now, 10); err != nil {
		t.Fatal(err)
	}
	if _, _, ok, err := s.Access(ctx, fresh.Access); !ok || err != nil {
		t.Fatalf("fresh token: %v %v", ok, err)
	}
	if _, _, ok, err := other.Access(ctx, fresh.Access); ok || err != nil {
		t.Fatalf("a store with another secret accepted the token: %v %v", ok, err)
	}
}

// A password pgx would find on its own (PGPASSWORD) is refused by Open and
// Inspect, unless given explicitly or allowed as unsafe.
func TestAmbientCredentialsRefused(t *testing.T) {
	srv := pgtest.Start(t)
	dsn := srv.CreateDB("ambient")
	ctx := context.Background()
	t.Setenv("PGPASSWORD", "from-the-environment")
	if _, err := pgstore.Open(ctx, pgstore.Config{DSN: dsn, Secret: testSecret}); err == nil || !strings.Contains(err.Error(), "PGPASSWORD") {
		t.Fatalf("Open with PGPASSWORD = %v", err)
	}
	if _, _, err := pgstore.Inspect(ctx, pgstore.Config{DSN: dsn}); err == nil || !strings.Contains(err.Error(), "PGPASSWORD") {
		t.Fatalf("Inspect with PGPASSWORD = %v", err)
	}
	s, err := pgstore.Open(ctx, pgstore.Config{DSN: dsn, Secret: testSecret, UnsafeAmbientCredentials: true})
	if err != nil {
		t.Fatalf("Open with UnsafeAmbientCredentials = %v", err)
	}
	s.Close()
}

// Inspect reads the OAuth schema version without creating anything: 0 in
// an empty database and in one whose ledger has no OAuth tables yet, the
// version once a store has opened it, an error for a newer one.
func TestInspect(t *testing.T) {
	srv := pgtest.Start(t)
	dsn := srv.CreateDB("inspect")
	ctx := context.Background()
	inspect := func(what string, want int) {
		t.Helper()
		v, label, err := pgstore.Inspect(ctx, pgstore.Config{DSN: dsn})
		if err != nil || v != want || !strings.HasSuffix(label, "/inspect") {
			t.Fatalf("Inspect %s = %d, %q, %v; want %d", what, v, label, err, want)
		}
	}
	inspect("an empty database", 0)
	srv.Psql("inspect", `CREATE TABLE rigout_meta (key text PRIMARY KEY, value text NOT NULL)`)
	inspect("a database with another schema's meta table", 0)
	if tables := srv.Psql("inspect", `SELECT count(*) FROM pg_tables WHERE schemaname = 'public'`); tables != "1" {
		t.Fatalf("Inspect created tables: %s in the database, want 1", tables)
	}
	s, err := pgstore.Open(ctx, pgstore.Config{DSN: dsn, Secret: testSecret})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	inspect("after Open", pgstore.SchemaVersion)
	srv.Psql("inspect", `UPDATE rigout_meta SET value = '99' WHERE key = 'oauth_schema_version'`)
	var sv *pgstore.SchemaVersionError
	if _, _, err := pgstore.Inspect(ctx, pgstore.Config{DSN: dsn}); !errors.As(err, &sv) || sv.Found != 99 {
		t.Fatalf("Inspect of a newer schema = %v, want a SchemaVersionError for 99", err)
	}
}
