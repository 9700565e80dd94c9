package pgstore_test

import (
	"context"
	"log"
	"os"

	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/auth/pgstore"
)

// Two gateways given the same Store (or each its own Store on the same
// database) accept each other's OAuth tokens.
func Example() {
	ctx := context.Background()
	store, err := pgstore.Open(ctx, pgstore.Config{
		DSN:      "postgres://rigout@db.internal:5432/rigout?sslmode=verify-full",
		Password: os.Getenv("RIGOUT_AUDIT_PASSWORD"),
		Secret:   []byte(os.Getenv("RIGOUT_OAUTH_SECRET")), // the same on every gateway
		Gateway:  "web-eu-1",
	})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	_ = auth.OAuthConfig{
		Consent: true,
		Clients: []auth.Client{{ID: "cli", RedirectURIs: []string{"http://127.0.0.1/callback"}, Scopes: auth.FullScopes()}},
		Store:   store,
	}
}
