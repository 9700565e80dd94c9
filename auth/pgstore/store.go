package pgstore

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/internal/pgcred"
)

const (
	defaultTimeout = 5 * time.Second
	sweepEvery     = 30 * time.Second
	// migrateLockKey is the advisory lock of audit/postgres's migrations
	// ("rigout" in ASCII, then 2): the two packages share rigout_meta and
	// must not create it at once.
	migrateLockKey int64 = 0x7269676f75740002
	versionKey           = "oauth_schema_version"
)

// migrations is the schema history: migrations[i] takes the database from
// version i to i+1. Append; never edit a released entry.
var migrations = [...]string{
	`CREATE TABLE rigout_oauth_clients (
		id            text    PRIMARY KEY,
		name          text    NOT NULL,
		secret        bytea   NOT NULL,
		confidential  boolean NOT NULL,
		redirect_uris text[]  NOT NULL,
		scopes        jsonb   NOT NULL
	);
	CREATE TABLE rigout_oauth_pending (
		digest       bytea  PRIMARY KEY,
		kind         text   NOT NULL,
		client_id    text   NOT NULL,
		redirect_uri text   NOT NULL,
		state        text   NOT NULL,
		challenge    text   NOT NULL,
		resource     text   NOT NULL,
		expires_ns   bigint NOT NULL
	);
	CREATE TABLE rigout_oauth_spent (
		digest     bytea  PRIMARY KEY,
		grant_id   text   NOT NULL DEFAULT '',
		expires_ns bigint NOT NULL
	);
	CREATE TABLE rigout_oauth_grants (
		id        text  PRIMARY KEY,
		client_id text  NOT NULL,
		scopes    jsonb NOT NULL,
		resource  text  NOT NULL,
		gateway   text  NOT NULL
	);
	CREATE INDEX rigout_oauth_grants_client ON rigout_oauth_grants(client_id);
	CREATE TABLE rigout_oauth_tokens (
		digest     bytea   PRIMARY KEY,
		grant_id   text    NOT NULL REFERENCES rigout_oauth_grants(id) ON DELETE CASCADE,
		refresh    boolean NOT NULL,
		expires_ns bigint  NOT NULL,
		used       boolean NOT NULL DEFAULT false
	);
	CREATE INDEX rigout_oauth_tokens_grant ON rigout_oauth_tokens(grant_id);`,

	// 1 → 2: keyed digests and signed grants. Every digest stored from
	// here on is HMAC-SHA256 under the server secret of the token's
	// SHA-256 digest (see Store.key), and every grant carries a MAC of its
	// fields (see Store.grantMAC), so a row inserted by hand is neither a
	// token nor a grant. The rows of version 1 hold plain digests and no
	// MAC: they are dropped, and every client signs in again once.
	`ALTER TABLE rigout_oauth_grants ADD COLUMN mac bytea NOT NULL DEFAULT ''::bytea;
	DELETE FROM rigout_oauth_tokens;
	DELETE FROM rigout_oauth_grants;
	DELETE FROM rigout_oauth_pending;
	DELETE FROM rigout_oauth_spent;`,

	// 2 → 3: registrations lapse. A dynamically registered client that
	// has obtained no grant by expires_ns is unknown from then on and its
	// row is deleted (auth.StoredClient.Expires); 0 means never, which is
	// what clients registered before this version keep.
	`ALTER TABLE rigout_oauth_clients ADD COLUMN registered_ns bigint NOT NULL DEFAULT 0;
	ALTER TABLE rigout_oauth_clients ADD COLUMN expires_ns bigint NOT NULL DEFAULT 0;`,
}

// SchemaVersion is the OAuth schema version this build writes and reads.
const SchemaVersion = len(migrations)

// Config configures a [Store]. DSN is required.
type Config struct {
	// DSN is the connection string, as for the audit ledger. Put no
	// password in it: use Password.
	DSN string
	// Password, if not empty, overrides any password in DSN.
	Password string
	// Secret keys what the store keeps: tokens, codes and consents are
	// stored as HMAC-SHA256 under it of their digest, and every grant
	// carries a MAC under it, so a row that someone with access to the
	// database inserts by hand authenticates nothing. Every gateway
	// sharing the database must be given the same secret, from a place
	// the commands they run cannot reach; at least 32 bytes. Required,
	// unless UnsafeSecretInDatabase is set.
	Secret []byte
	// UnsafeSecretInDatabase keeps a random secret in the database itself
	// (rigout_meta) when Secret is nil. Whoever can read the database can
	// then mint tokens: use it only where nothing but the gateways can
	// reach the database.
	UnsafeSecretInDatabase bool
	// UnsafeAmbientCredentials lets the connection use a password pgx
	// finds on its own: PGPASSWORD, a password file (~/.pgpass,
	// PGPASSFILE) or a service file, which the commands a gateway runs can
	// usually read too. Without it, Open and Inspect refuse such a
	// password: give it in Password.
	UnsafeAmbientCredentials bool
	// Gateway names this gateway instance; grants record where they were
	// issued. If empty, "".
	Gateway string
	// Timeout bounds every query, connecting included: a database that
	// does not answer makes the check fail (closed) after it. If zero, 5s.
	Timeout time.Duration
	// MaxConns caps the connection pool. If zero, 4.
	MaxConns int32
	// Logger receives diagnostics (failed sweeps). If nil, discarded.
	Logger *slog.Logger
}

// Store is an [auth.OAuthStore] in PostgreSQL. It is safe for concurrent
// use by any number of goroutines and processes.
type Store struct {
	label   string
	gateway string
	timeout time.Duration
	log     *slog.Logger
	pool    *pgxpool.Pool
	secret  []byte // keys the digests and the grants' MACs

	mu        sync.Mutex
	lastSweep time.Time
}

var _ auth.OAuthStore = (*Store)(nil)

// SchemaVersionError reports a database whose OAuth schema is newer than
// this build.
type SchemaVersionError struct {
	DB    string // host:port/database
	Found int    // the version in the database
	Max   int    // the version of this build
}

func (e *SchemaVersionError) Error() string {
	return fmt.Sprintf("pgstore: %s has OAuth schema version %d; this build uses %d", e.DB, e.Found, e.Max)
}

// Open connects, creates or migrates the schema and returns the store. It
// fails if the database cannot be reached.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.DSN == "" {
		return nil, errors.New("pgstore: Config.DSN is required")
	}
	switch {
	case cfg.Secret != nil && len(cfg.Secret) < minSecret:
		return nil, fmt.Errorf("pgstore: Config.Secret must be at least %d bytes, not %d", minSecret, len(cfg.Secret))
	case cfg.Secret == nil && !cfg.UnsafeSecretInDatabase:
		return nil, errors.New("pgstore: Config.Secret is required (the same on every gateway, kept where commands cannot read it), or set UnsafeSecretInDatabase")
	}
	pc, err := pgxpool.ParseConfig(cfg.DSN)
	if err != nil {
		return nil, fmt.Errorf("pgstore: DSN: %w", err)
	}
	if !cfg.UnsafeAmbientCredentials {
		if err := pgcred.Check(cfg.DSN, cfg.Password, pc.ConnConfig.Password); err != nil {
			return nil, fmt.Errorf("pgstore: %w; give the password in Config.Password, or set UnsafeAmbientCredentials", err)
		}
	}
	if cfg.Password != "" {
		pc.ConnConfig.Password = cfg.Password
	}
	pc.MaxConns = 4
	if cfg.MaxConns > 0 {
		pc.MaxConns = cfg.MaxConns
	}
	s := &Store{
		label:   fmt.Sprintf("%s:%d/%s", pc.ConnConfig.Host, pc.ConnConfig.Port, pc.ConnConfig.Database),
		gateway: cfg.Gateway,
		timeout: cfg.Timeout,
		log:     cfg.Logger,
		secret:  bytes.Clone(cfg.Secret),
	}
	if s.timeout <= 0 {
		s.timeout = defaultTimeout
	}
	if pc.ConnConfig.ConnectTimeout == 0 || pc.ConnConfig.ConnectTimeout > s.timeout {
		pc.ConnConfig.ConnectTimeout = s.timeout
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.pool, err = pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %s: %w", s.label, err)
	}
	if err := s.migrate(ctx); err != nil {
		s.pool.Close()
		return nil, err
	}
	if s.secret == nil {
		if s.secret, err = s.databaseSecret(ctx); err != nil {
			s.pool.Close()
			return nil, err
		}
	}
	return s, nil
}

// minSecret is the shortest Config.Secret accepted.
const minSecret = 32

// databaseSecret reads, or creates, the secret UnsafeSecretInDatabase keeps
// in rigout_meta.
func (s *Store) databaseSecret(ctx context.Context) ([]byte, error) {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	fresh := make([]byte, minSecret)
	if _, err := rand.Read(fresh); err != nil {
		return nil, err
	}
	var v string
	err := s.pool.QueryRow(ctx, `WITH ins AS (
			INSERT INTO rigout_meta (key, value) VALUES ('oauth_secret', $1) ON CONFLICT (key) DO NOTHING RETURNING value
		) SELECT value FROM ins UNION ALL SELECT value FROM rigout_meta WHERE key = 'oauth_secret' LIMIT 1`,
		hex.EncodeToString(fresh)).Scan(&v)
	if err != nil {
		return nil, s.wrap("read secret", err)
	}
	key, err := hex.DecodeString(v)
	if err != nil || len(key) < minSecret {
		return nil, s.wrap("read secret", fmt.Errorf("rigout_meta oauth_secret is not %d hex bytes", minSecret))
	}
	return key, nil
}

// key is what the store keeps for a digest: HMAC-SHA256 under the secret
// of a domain string and d.
func (s *Store) key(d auth.Digest) []byte {
	m := hmac.New(sha256.New, s.secret)
	m.Write([]byte("rigout.oauth.digest.v1\x00"))
	m.Write(d[:])
	return m.Sum(nil)
}

// grantMAC is a grant's MAC: HMAC-SHA256 under the secret of a domain
// string and its ID, client, scopes (as JSON) and resource, each followed
// by a zero byte.
func (s *Store) grantMAC(g auth.Grant) ([]byte, error) {
	scopes, err := json.Marshal(g.Scopes)
	if err != nil {
		return nil, err
	}
	m := hmac.New(sha256.New, s.secret)
	m.Write([]byte("rigout.oauth.grant.v1\x00"))
	for _, f := range [][]byte{[]byte(g.ID), []byte(g.ClientID), scopes, []byte(g.Resource)} {
		m.Write(f)
		m.Write([]byte{0})
	}
	return m.Sum(nil), nil
}

// signed reports whether mac is g's MAC, and logs a grant whose MAC fails:
// it was inserted or changed by hand.
func (s *Store) signed(ctx context.Context, g auth.Grant, mac []byte) bool {
	want, err := s.grantMAC(g)
	if err == nil && hmac.Equal(mac, want) {
		return true
	}
	s.log.LogAttrs(ctx, slog.LevelError, "pgstore: an OAuth grant does not carry a valid MAC: it was written by someone without the secret; refused",
		slog.String("db", s.label), slog.String("grant", g.ID), slog.String("client", g.ClientID))
	return false
}

// Label is host:port/database, for messages; never the password.
func (s *Store) Label() string { return s.label }

// Close closes the connection pool.
func (s *Store) Close() { s.pool.Close() }

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	return s.wrap("ping", s.pool.Ping(ctx))
}

func (s *Store) migrate(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*s.timeout)
	defer cancel()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrateLockKey); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS rigout_meta (key text PRIMARY KEY, value text NOT NULL)`); err != nil {
			return err
		}
		var v int
		var str string
		err := tx.QueryRow(ctx, `SELECT value FROM rigout_meta WHERE key = $1`, versionKey).Scan(&str)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return err
		default:
			if v, err = strconv.Atoi(str); err != nil {
				return fmt.Errorf("%s %q is not a number", versionKey, str)
			}
		}
		if v > SchemaVersion {
			return &SchemaVersionError{DB: s.label, Found: v, Max: SchemaVersion}
		}
		for i := v; i < SchemaVersion; i++ {
			if _, err := tx.Exec(ctx, migrations[i]); err != nil {
				return fmt.Errorf("migrate OAuth schema %d→%d: %w", i, i+1, err)
			}
		}
		if v != SchemaVersion {
			_, err = tx.Exec(ctx, `INSERT INTO rigout_meta (key, value) VALUES ($1, $2)
				ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`, versionKey, strconv.Itoa(SchemaVersion))
		}
		return err
	})
	var sv *SchemaVersionError
	if errors.As(err, &sv) {
		return err
	}
	return s.wrap("open", err)
}

// wrap names the database in an error; nil stays nil.
func (s *Store) wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("pgstore: %s: %s: %w", s.label, op, err)
}

func ns(t time.Time) int64 { return t.UnixNano() }

// nsOrZero is ns, with the zero time (never) as 0.
func nsOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// fromNS is the inverse of nsOrZero.
func fromNS(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// deleteLapsedClients deletes the registrations that lapsed unused by $1
// (a client with a grant has expires_ns 0, cleared by CreateGrant; the
// NOT EXISTS guards a grant made by an older build).
const deleteLapsedClients = `DELETE FROM rigout_oauth_clients c WHERE c.expires_ns <> 0 AND c.expires_ns <= $1
	AND NOT EXISTS (SELECT 1 FROM rigout_oauth_grants g WHERE g.client_id = c.id)`

func (s *Store) ctx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.timeout)
}

// Client implements [auth.OAuthStore].
func (s *Store) Client(ctx context.Context, id string) (auth.StoredClient, bool, error) {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	var (
		c      auth.StoredClient
		secret []byte
		scopes []byte
	)
	var registered, expires int64
	err := s.pool.QueryRow(ctx, `SELECT id, name, secret, confidential, redirect_uris, scopes, registered_ns, expires_ns
		FROM rigout_oauth_clients WHERE id = $1`, id).Scan(&c.ID, &c.Name, &secret, &c.Confidential, &c.RedirectURIs, &scopes, &registered, &expires)
	if errors.Is(err, pgx.ErrNoRows) {
		return c, false, nil
	}
	if err != nil {
		return c, false, s.wrap("client", err)
	}
	copy(c.Secret[:], secret)
	if err := json.Unmarshal(scopes, &c.Scopes); err != nil {
		return c, false, s.wrap("client scopes", err)
	}
	c.Registered, c.Expires = fromNS(registered), fromNS(expires)
	return c, true, nil
}

// AddClient implements [auth.OAuthStore]. Registrations that lapsed
// unused by c.Registered are deleted first, so that their slots come free
// as in the memory store. The bound is checked in the statement; gateways
// inserting at the same instant may pass it by a few.
func (s *Store) AddClient(ctx context.Context, c auth.StoredClient, max int) error {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	scopes, err := json.Marshal(c.Scopes)
	if err != nil {
		return err
	}
	if !c.Registered.IsZero() {
		if _, err := s.pool.Exec(ctx, deleteLapsedClients, ns(c.Registered)); err != nil {
			return s.wrap("delete lapsed registrations", err)
		}
	}
	tag, err := s.pool.Exec(ctx, `INSERT INTO rigout_oauth_clients (id, name, secret, confidential, redirect_uris, scopes, registered_ns, expires_ns)
		SELECT $1, $2, $3, $4, $5, $6, $8, $9 WHERE (SELECT count(*) FROM rigout_oauth_clients) < $7`,
		c.ID, c.Name, c.Secret[:], c.Confidential, c.RedirectURIs, scopes, max, nsOrZero(c.Registered), nsOrZero(c.Expires))
	if err != nil {
		return s.wrap("add client", err)
	}
	if tag.RowsAffected() == 0 {
		return auth.ErrStoreFull
	}
	return nil
}

// AddPending implements [auth.OAuthStore].
func (s *Store) AddPending(ctx context.Context, kind auth.PendingKind, d auth.Digest, p auth.Pending, now time.Time, max int) error {
	s.sweep(ctx, now)
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	tag, err := s.pool.Exec(ctx, `INSERT INTO rigout_oauth_pending (digest, kind, client_id, redirect_uri, state, challenge, resource, expires_ns)
		SELECT $1, $2, $3, $4, $5, $6, $7, $8
		WHERE (SELECT count(*) FROM rigout_oauth_pending WHERE expires_ns > $9) < $10`,
		s.key(d), string(kind), p.ClientID, p.RedirectURI, p.State, p.Challenge, p.Resource, ns(p.Expires), ns(now), max)
	if err != nil {
		return s.wrap("add pending authorization", err)
	}
	if tag.RowsAffected() == 0 {
		return auth.ErrStoreFull
	}
	return nil
}

// scanPending reads client_id, redirect_uri, state, challenge, resource,
// expires_ns and one more column into dst.
func scanPending(row pgx.Row, extra any) (auth.Pending, error) {
	var p auth.Pending
	var exp int64
	err := row.Scan(&p.ClientID, &p.RedirectURI, &p.State, &p.Challenge, &p.Resource, &exp, extra)
	p.Expires = time.Unix(0, exp)
	return p, err
}

// TakeConsent implements [auth.OAuthStore]: DELETE … RETURNING, so one
// gateway takes it.
func (s *Store) TakeConsent(ctx context.Context, d auth.Digest, now time.Time) (auth.Pending, bool, error) {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	var live bool
	p, err := scanPending(s.pool.QueryRow(ctx, `DELETE FROM rigout_oauth_pending WHERE digest = $1 AND kind = 'consent'
		RETURNING client_id, redirect_uri, state, challenge, resource, expires_ns, expires_ns > $2`, s.key(d), ns(now)), &live)
	if errors.Is(err, pgx.ErrNoRows) {
		return auth.Pending{}, false, nil
	}
	if err != nil {
		return auth.Pending{}, false, s.wrap("take consent", err)
	}
	return p, live, nil
}

// SpendCode implements [auth.OAuthStore]: the code is deleted and noted
// as spent in one statement, so exactly one caller gets it.
func (s *Store) SpendCode(ctx context.Context, d auth.Digest, now, spentUntil time.Time) (auth.Pending, bool, *auth.Grant, error) {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	var digest []byte
	p, err := scanPending(s.pool.QueryRow(ctx, `WITH taken AS (
			DELETE FROM rigout_oauth_pending WHERE digest = $1 AND kind = 'code'
			RETURNING digest, client_id, redirect_uri, state, challenge, resource, expires_ns
		), spent AS (
			INSERT INTO rigout_oauth_spent (digest, grant_id, expires_ns) SELECT digest, '', $2 FROM taken
			ON CONFLICT (digest) DO UPDATE SET grant_id = '', expires_ns = EXCLUDED.expires_ns
		)
		SELECT client_id, redirect_uri, state, challenge, resource, expires_ns, digest FROM taken`, s.key(d), ns(spentUntil)), &digest)
	if err == nil {
		return p, true, nil, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return auth.Pending{}, false, nil, s.wrap("redeem code", err)
	}
	// Not pending: a spent code that produced a grant revokes it.
	g, err := scanGrant(s.pool.QueryRow(ctx, `WITH sp AS (
			DELETE FROM rigout_oauth_spent WHERE digest = $1 AND grant_id <> '' AND expires_ns > $2 RETURNING grant_id
		)
		DELETE FROM rigout_oauth_grants WHERE id IN (SELECT grant_id FROM sp) RETURNING id, client_id, scopes, resource`, s.key(d), ns(now)))
	if errors.Is(err, pgx.ErrNoRows) {
		return auth.Pending{}, false, nil, nil
	}
	if err != nil {
		return auth.Pending{}, false, nil, s.wrap("revoke reused code's grant", err)
	}
	return auth.Pending{}, false, &g, nil
}

func scanGrant(row pgx.Row, extra ...any) (auth.Grant, error) {
	var g auth.Grant
	var scopes []byte
	if err := row.Scan(append([]any{&g.ID, &g.ClientID, &scopes, &g.Resource}, extra...)...); err != nil {
		return g, err
	}
	if err := json.Unmarshal(scopes, &g.Scopes); err != nil {
		return g, fmt.Errorf("grant scopes: %w", err)
	}
	return g, nil
}

// CreateGrant implements [auth.OAuthStore], in one transaction.
func (s *Store) CreateGrant(ctx context.Context, g auth.Grant, code auth.Digest, t auth.Tokens, now time.Time, max int) error {
	s.sweep(ctx, now)
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	scopes, err := json.Marshal(g.Scopes)
	if err != nil {
		return err
	}
	mac, err := s.grantMAC(g)
	if err != nil {
		return err
	}
	full := false
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO rigout_oauth_grants (id, client_id, scopes, resource, gateway, mac)
			SELECT $1, $2, $3, $4, $5, $6 WHERE (SELECT count(*) FROM rigout_oauth_grants) < $7`,
			g.ID, g.ClientID, scopes, g.Resource, s.gateway, mac, max)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			full = true
			return nil
		}
		if err := s.insertTokens(ctx, tx, g.ID, t); err != nil {
			return err
		}
		// A client that obtained a grant is kept (auth.StoredClient.Expires).
		if _, err := tx.Exec(ctx, `UPDATE rigout_oauth_clients SET expires_ns = 0 WHERE id = $1 AND expires_ns <> 0`, g.ClientID); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE rigout_oauth_spent SET grant_id = $1 WHERE digest = $2`, g.ID, s.key(code))
		return err
	})
	if err != nil {
		return s.wrap("create grant", err)
	}
	if full {
		return auth.ErrStoreFull
	}
	return nil
}

func (s *Store) insertTokens(ctx context.Context, tx pgx.Tx, grant string, t auth.Tokens) error {
	_, err := tx.Exec(ctx, `INSERT INTO rigout_oauth_tokens (digest, grant_id, refresh, expires_ns)
		VALUES ($1, $2, false, $3), ($4, $2, true, $5)`, s.key(t.Access), grant, ns(t.AccessExpires), s.key(t.Refresh), ns(t.RefreshExpires))
	return err
}

// Rotate implements [auth.OAuthStore]. The refresh token is spent by an
// UPDATE … WHERE NOT used AND expires_ns > now, which PostgreSQL
// re-evaluates after a concurrent UPDATE of the same row commits: of two
// gateways presenting it at once, one rotates and the other sees it used
// and revokes the grant, as a reuse must.
func (s *Store) Rotate(ctx context.Context, old auth.Digest, clientID string, now time.Time, next auth.Tokens) (auth.Grant, auth.RotateResult, error) {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	var (
		g   auth.Grant
		res auth.RotateResult
	)
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		var mac []byte
		g, err = scanGrant(tx.QueryRow(ctx, `UPDATE rigout_oauth_tokens t SET used = true
			FROM rigout_oauth_grants g
			WHERE t.digest = $1 AND t.refresh AND NOT t.used AND t.expires_ns > $2
			  AND g.id = t.grant_id AND g.client_id = $3
			RETURNING g.id, g.client_id, g.scopes, g.resource, g.mac`, s.key(old), ns(now), clientID), &mac)
		if err == nil {
			if !s.signed(ctx, g, mac) {
				return errUnsigned
			}
			res = auth.RotateOK
			return s.insertTokens(ctx, tx, g.ID, next)
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		var used bool
		var exp int64
		g, err = scanGrant(tx.QueryRow(ctx, `SELECT g.id, g.client_id, g.scopes, g.resource, t.used, t.expires_ns
			FROM rigout_oauth_tokens t JOIN rigout_oauth_grants g ON g.id = t.grant_id
			WHERE t.digest = $1 AND t.refresh FOR UPDATE OF t`, s.key(old)), &used, &exp)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			g, res = auth.Grant{}, auth.RotateUnknown
			return nil
		case err != nil:
			return err
		case used:
			res = auth.RotateReused
		case g.ClientID != clientID:
			res = auth.RotateOtherClient
		default:
			res = auth.RotateExpired
			return nil
		}
		_, err = tx.Exec(ctx, `DELETE FROM rigout_oauth_grants WHERE id = $1`, g.ID)
		return err
	})
	if errors.Is(err, errUnsigned) {
		return auth.Grant{}, auth.RotateUnknown, nil // rolled back: nothing spent
	}
	if err != nil {
		return auth.Grant{}, 0, s.wrap("rotate refresh token", err)
	}
	return g, res, nil
}

// errUnsigned rolls back a transaction that found a grant without a valid
// MAC.
var errUnsigned = errors.New("pgstore: grant without a valid MAC")

// Access implements [auth.OAuthStore]: one query on the token's primary
// key.
func (s *Store) Access(ctx context.Context, d auth.Digest) (auth.Grant, time.Time, bool, error) {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	var exp int64
	var mac []byte
	g, err := scanGrant(s.pool.QueryRow(ctx, `SELECT g.id, g.client_id, g.scopes, g.resource, t.expires_ns, g.mac
		FROM rigout_oauth_tokens t JOIN rigout_oauth_grants g ON g.id = t.grant_id
		WHERE t.digest = $1 AND NOT t.refresh`, s.key(d)), &exp, &mac)
	if errors.Is(err, pgx.ErrNoRows) {
		return auth.Grant{}, time.Time{}, false, nil
	}
	if err != nil {
		return auth.Grant{}, time.Time{}, false, s.wrap("check token", err)
	}
	if !s.signed(ctx, g, mac) {
		return auth.Grant{}, time.Time{}, false, nil
	}
	return g, time.Unix(0, exp), true, nil
}

// GrantLive implements [auth.OAuthStore].
func (s *Store) GrantLive(ctx context.Context, id string, now time.Time) (bool, error) {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	var live bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM rigout_oauth_tokens
		WHERE grant_id = $1 AND NOT used AND expires_ns > $2)`, id, ns(now)).Scan(&live)
	return live, s.wrap("check grant", err)
}

// RevokeClient implements [auth.OAuthStore].
func (s *Store) RevokeClient(ctx context.Context, clientID string) ([]string, error) {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, `DELETE FROM rigout_oauth_grants WHERE client_id = $1 RETURNING id`, clientID)
	if err != nil {
		return nil, s.wrap("revoke client", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return ids, s.wrap("revoke client", err)
}

// sweep deletes expired rows, at most every 30 seconds per Store. It is
// best effort: a failure is logged, and the next call tries again.
func (s *Store) sweep(ctx context.Context, now time.Time) {
	s.mu.Lock()
	due := now.Sub(s.lastSweep) >= sweepEvery || now.Before(s.lastSweep)
	if due {
		s.lastSweep = now
	}
	s.mu.Unlock()
	if !due {
		return
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	n := ns(now)
	for _, q := range []string{
		`DELETE FROM rigout_oauth_pending WHERE expires_ns <= $1`,
		`DELETE FROM rigout_oauth_spent WHERE expires_ns <= $1`,
		`DELETE FROM rigout_oauth_grants g WHERE NOT EXISTS (SELECT 1 FROM rigout_oauth_tokens t
			WHERE t.grant_id = g.id AND NOT t.used AND t.expires_ns > $1)`,
		`DELETE FROM rigout_oauth_tokens WHERE NOT refresh AND expires_ns <= $1`,
		deleteLapsedClients,
	} {
		if _, err := s.pool.Exec(ctx, q, n); err != nil {
			s.log.Warn("pgstore: sweep of expired OAuth state failed", "db", s.label, "error", err.Error())
			return
		}
	}
}

// Inspect connects without creating or migrating anything and returns the
// OAuth schema version in the database (0 when there is none yet) and its
// label. It is what rigout doctor reports.
func Inspect(ctx context.Context, cfg Config) (version int, label string, err error) {
	pc, err := pgx.ParseConfig(cfg.DSN)
	if err != nil {
		return 0, "", fmt.Errorf("pgstore: DSN: %w", err)
	}
	if !cfg.UnsafeAmbientCredentials {
		if err := pgcred.Check(cfg.DSN, cfg.Password, pc.Password); err != nil {
			return 0, "", fmt.Errorf("pgstore: %w; give the password in Config.Password, or set UnsafeAmbientCredentials", err)
		}
	}
	if cfg.Password != "" {
		pc.Password = cfg.Password
	}
	label = fmt.Sprintf("%s:%d/%s", pc.Host, pc.Port, pc.Database)
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, pc)
	if err != nil {
		return 0, label, fmt.Errorf("pgstore: %s: %w", label, err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	// Two statements: one naming a table that does not exist fails when
	// it is planned, whatever CASE would have chosen.
	var meta bool
	if err := conn.QueryRow(ctx, `SELECT to_regclass('rigout_meta') IS NOT NULL`).Scan(&meta); err != nil {
		return 0, label, fmt.Errorf("pgstore: %s: %w", label, err)
	}
	if !meta {
		return 0, label, nil // an empty database
	}
	var s string
	err = conn.QueryRow(ctx, `SELECT value FROM rigout_meta WHERE key = $1`, versionKey).Scan(&s)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, label, nil // a ledger without OAuth tables
	}
	if err != nil {
		return 0, label, fmt.Errorf("pgstore: %s: %w", label, err)
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, label, fmt.Errorf("pgstore: %s: %s %q is not a number", label, versionKey, s)
	}
	if v > SchemaVersion {
		return v, label, &SchemaVersionError{DB: label, Found: v, Max: SchemaVersion}
	}
	return v, label, nil
}
