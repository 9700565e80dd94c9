package auth_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/rigout/rigout/audit/postgres/pgtest"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/auth/pgstore"
)

// storeKind is an OAuthStore implementation the OAuth suite runs against.
type storeKind struct {
	name string
	// open returns a store for one Front; stores opened by one test share
	// their state (the same database), as gateways would.
	open func(t *testing.T) auth.OAuthStore
}

// memoryStore is the default in-memory store (a nil Store).
var memoryStore = storeKind{name: "memory", open: func(*testing.T) auth.OAuthStore { return nil }}

// oauthSuite is the OAuth test suite, run by the TestOAuth… functions
// against the in-memory store and by TestOAuthSuitePostgres against
// PostgreSQL, so that both meet one contract.
var oauthSuite = []struct {
	name string
	body func(t *testing.T, st storeKind)
}{
	{"Metadata", testOAuthMetadata},
	{"CodeFlow", testOAuthCodeFlow},
	{"CodeExchangeFailures", testOAuthCodeExchangeFailures},
	{"AuthorizeErrors", testOAuthAuthorizeErrors},
	{"RefreshRotation", testOAuthRefreshRotation},
	{"Consent", testOAuthConsent},
	{"DynamicRegistration", testOAuthDynamicRegistration},
	{"RevokeClient", testOAuthRevokeClient},
	{"ThrottleSparesValidRequests", testOAuthThrottleSparesValidRequests},
	{"RegistrationFlood", testOAuthRegistrationFlood},
}

// TestOAuthSuitePostgres runs the whole OAuth suite against pgstore on a
// real PostgreSQL server (pgtest: skipped loudly without one, failed under
// RIGOUT_REQUIRE_POSTGRES=1), each test on a fresh database.
func TestOAuthSuitePostgres(t *testing.T) {
	srv := pgtest.Start(t)
	for i, c := range oauthSuite {
		t.Run(c.name, func(t *testing.T) {
			dsn := srv.CreateDB(fmt.Sprintf("oauth_suite_%d", i))
			c.body(t, storeKind{name: "postgres", open: func(t *testing.T) auth.OAuthStore { return openPG(t, dsn) }})
		})
	}
}

// openPG opens a pgstore on dsn, closed when t ends.
func openPG(t testing.TB, dsn string) *pgstore.Store {
	t.Helper()
	s, err := pgstore.Open(context.Background(), pgstore.Config{DSN: dsn, Gateway: t.Name(), Logger: testLogger(),
		Secret: []byte("rigout auth test store secret..."), // the same for every gateway of a test
	})
	if err != nil {
		t.Fatalf("pgstore.Open: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}
