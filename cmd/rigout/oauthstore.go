package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"fmt"
	"log/slog"

	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/auth/pgstore"
)

// attachOAuthStore puts the OAuth server's state in the PostgreSQL
// database of the audit ledger ("audit.postgres", with the same
// password_env, key_env and gateway name) when the file names one, so that every
// gateway sharing the ledger shares the grants too. Without it the state
// stays in this process's memory. The returned function closes the store.
func (c *common) attachOAuthStore(ctx context.Context, o *auth.OAuthConfig, logger *slog.Logger) (func(), error) {
	if o == nil || c.file.Audit.Postgres == "" {
		return func() {}, nil
	}
	pc, err := c.postgresConfig(false, logger)
	if err != nil {
		return nil, err
	}
	// The store's secret is derived from the ledger's chain key, which
	// every gateway sharing the database holds; with the unsafe
	// database-held chain key, the store keeps its secret there too.
	var secret []byte
	if pc.ChainKey != nil {
		m := hmac.New(sha256.New, pc.ChainKey)
		m.Write([]byte("rigout.oauth.store-secret.v1"))
		secret = m.Sum(nil)
	}
	s, err := pgstore.Open(ctx, pgstore.Config{DSN: pc.DSN, Password: pc.Password, Gateway: pc.Gateway, Logger: logger,
		Secret: secret, UnsafeSecretInDatabase: secret == nil && pc.UnsafeChainKeyInDatabase,
		UnsafeAmbientCredentials: pc.UnsafeAmbientCredentials})
	if err != nil {
		return nil, fmt.Errorf("OAuth store: %w", err)
	}
	o.Store = s
	logger.Info("OAuth state on PostgreSQL", "db", s.Label())
	return s.Close, nil
}
