package pgstore_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/rigout/rigout/audit/postgres/pgtest"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/auth/pgstore"
)

func open(t testing.TB, dsn string) *pgstore.Store {
	t.Helper()
	s, err := pgstore.Open(context.Background(), pgstore.Config{DSN: dsn, Gateway: "test"})
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
			s, err := pgstore.Open(context.Background(), pgstore.Config{DSN: dsn})
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
	if got := srv.Psql("migrate", `SELECT value FROM rigout_meta WHERE key = 'oauth_schema_version'`); got != "1" {
		t.Fatalf("schema version %q", got)
	}
	srv.Psql("migrate", `UPDATE rigout_meta SET value = '99' WHERE key = 'oauth_schema_version'`)
	_, err := pgstore.Open(context.Background(), pgstore.Config{DSN: dsn})
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
