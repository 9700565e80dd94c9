package auth

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"
)

// ErrStoreFull is returned by an [OAuthStore] when a bounded table (pending
// authorizations, live grants, registered clients) is full.
var ErrStoreFull = errors.New("auth: too many live grants")

// StoreError wraps an error of the [OAuthStore] itself (a database that is
// down, a query that failed). The Front fails closed on it: a token it
// cannot check is refused with 503, never let through.
type StoreError struct {
	// Op is what the Front was doing: "check token", "redeem code", ...
	Op string
	// Err is the store's error.
	Err error
}

// Error implements error.
func (e *StoreError) Error() string {
	return "auth: OAuth store unavailable: " + e.Op + ": " + e.Err.Error()
}

// Unwrap returns the underlying error.
func (e *StoreError) Unwrap() error { return e.Err }

// OAuthStore holds the authorization server's state: dynamically
// registered clients, pending authorizations (codes and consent pages),
// grants and their access and refresh tokens. Credentials are keyed by
// their SHA-256 [Digest]; a store never sees a token, code or secret
// itself. Every method that consumes something (a code, a consent, a
// refresh token) does so exactly once even when several Fronts share the
// store. Times are the Front's clock, passed in, so that expiry is decided
// the same way by every implementation.
//
// [NewMemoryStore] is the default; package auth/pgstore keeps the state in
// PostgreSQL for several gateways.
type OAuthStore interface {
	// Client returns the registered client id; ok is false if there is none.
	Client(ctx context.Context, id string) (c StoredClient, ok bool, err error)
	// AddClient registers c, or returns ErrStoreFull when max clients are
	// registered already.
	AddClient(ctx context.Context, c StoredClient, max int) error
	// AddPending stores a pending authorization under the digest of its
	// code or consent ID, or returns ErrStoreFull when max are pending.
	AddPending(ctx context.Context, kind PendingKind, d Digest, p Pending, now time.Time, max int) error
	// TakeConsent deletes consent d and returns it; ok is false when there
	// is none or it has expired.
	TakeConsent(ctx context.Context, d Digest, now time.Time) (p Pending, ok bool, err error)
	// SpendCode deletes code d and returns it (expired or not: the caller
	// decides), remembering it as spent until spentUntil. When there is no
	// such code but d was spent and produced a grant, that grant is revoked
	// and returned as reused.
	SpendCode(ctx context.Context, d Digest, now, spentUntil time.Time) (p Pending, ok bool, reused *Grant, err error)
	// CreateGrant stores g with its first tokens and notes that code
	// produced it, or returns ErrStoreFull when max grants are live.
	CreateGrant(ctx context.Context, g Grant, code Digest, t Tokens, now time.Time, max int) error
	// Rotate spends refresh token old of clientID and stores next for the
	// same grant. A second use of old, or a use by another client, revokes
	// the whole grant; res says which case it was, g names the grant (zero
	// for RotateUnknown).
	Rotate(ctx context.Context, old Digest, clientID string, now time.Time, next Tokens) (g Grant, res RotateResult, err error)
	// Access returns the grant of access token d and its expiry.
	Access(ctx context.Context, d Digest) (g Grant, expires time.Time, ok bool, err error)
	// GrantLive reports whether grant id exists and holds a live access or
	// refresh token.
	GrantLive(ctx context.Context, id string, now time.Time) (bool, error)
	// RevokeClient deletes every grant of clientID and returns their IDs.
	RevokeClient(ctx context.Context, clientID string) ([]string, error)
}

// StoredClient is a dynamically registered OAuth client.
type StoredClient struct {
	// ID is the client_id.
	ID string
	// Name is shown on the consent page.
	Name string
	// Secret is the digest of the client secret; zero for a public client.
	Secret Digest
	// Confidential reports whether the client authenticates with Secret.
	Confidential bool
	// RedirectURIs are the registered redirect URIs.
	RedirectURIs []string
	// Scopes are what the client's tokens may do.
	Scopes Scopes
	// Registered is when the client registered.
	Registered time.Time
	// Expires, if not zero, is when the registration lapses unless the
	// client has obtained a grant by then: the Front treats it as unknown
	// after it, and a store may delete it. A store that issues a grant to
	// the client clears it.
	Expires time.Time
}

// PendingKind tells a pending authorization code from a consent page.
type PendingKind string

// The kinds of pending authorization.
const (
	PendingCode    PendingKind = "code"
	PendingConsent PendingKind = "consent"
)

// Pending is a validated authorization request awaiting its code exchange
// or the operator's decision.
type Pending struct {
	// ClientID is the client that asked.
	ClientID string
	// RedirectURI is the redirect URI of the request.
	RedirectURI string
	// State is the client's state parameter.
	State string
	// Challenge is the PKCE S256 code challenge.
	Challenge string
	// Resource is the canonical resource the tokens will be for.
	Resource string
	// Expires is when the code or consent page stops working.
	Expires time.Time
}

// Grant is one authorization and every token refreshed from it: the family
// that a reused refresh token or code revokes as a whole.
type Grant struct {
	// ID identifies the grant in logs and events; not a secret.
	ID string
	// ClientID is the client the grant was issued to.
	ClientID string
	// Scopes are what its tokens may do.
	Scopes Scopes
	// Resource is the audience of its tokens.
	Resource string
}

// Tokens are the digests of a freshly minted access and refresh token.
type Tokens struct {
	// Access is the digest of the access token.
	Access Digest
	// Refresh is the digest of the refresh token.
	Refresh Digest
	// AccessExpires is when the access token stops working.
	AccessExpires time.Time
	// RefreshExpires is when the refresh token stops working.
	RefreshExpires time.Time
}

// RotateResult is the outcome of [OAuthStore.Rotate].
type RotateResult int

// The outcomes of a refresh.
const (
	RotateOK          RotateResult = iota // rotated: the new tokens are stored
	RotateUnknown                         // no such refresh token
	RotateReused                          // already rotated: the grant is revoked
	RotateOtherClient                     // another client's token: the grant is revoked
	RotateExpired                         // expired; nothing is revoked
)

// memoryStore is the in-memory OAuthStore, one mutex over maps.
type memoryStore struct {
	mu        sync.Mutex
	clients   map[string]StoredClient
	pending   map[Digest]memPending
	spent     map[Digest]spentCode
	grants    map[string]*memGrant
	access    map[Digest]*memToken
	refresh   map[Digest]*memToken
	lastSweep time.Time
}

type memPending struct {
	kind PendingKind
	p    Pending
}

type spentCode struct {
	grantID string // "" until the exchange produced a grant
	expires time.Time
}

type memGrant struct {
	g       Grant
	access  []Digest // access tokens, possibly expired
	refresh Digest   // the current refresh token
	used    []Digest // rotated refresh tokens, oldest first
}

type memToken struct {
	grant   *memGrant
	expires time.Time
	used    bool // a refresh token that has been rotated
}

// NewMemoryStore returns an [OAuthStore] kept in this process's memory,
// the default: state is lost on restart and not shared with other
// gateways.
func NewMemoryStore() OAuthStore {
	return &memoryStore{
		clients: make(map[string]StoredClient),
		pending: make(map[Digest]memPending),
		spent:   make(map[Digest]spentCode),
		grants:  make(map[string]*memGrant),
		access:  make(map[Digest]*memToken),
		refresh: make(map[Digest]*memToken),
	}
}

func (m *memoryStore) Client(_ context.Context, id string) (StoredClient, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.clients[id]
	return c, ok, nil
}

func (m *memoryStore) AddClient(_ context.Context, c StoredClient, max int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.clients) >= max {
		// Free the slots of registrations that lapsed unused.
		for id, old := range m.clients {
			if !old.Expires.IsZero() && !c.Registered.Before(old.Expires) {
				delete(m.clients, id)
			}
		}
	}
	if len(m.clients) >= max {
		return ErrStoreFull
	}
	c.RedirectURIs = slices.Clone(c.RedirectURIs)
	c.Scopes = c.Scopes.clone()
	m.clients[c.ID] = c
	return nil
}

func (m *memoryStore) AddPending(_ context.Context, kind PendingKind, d Digest, p Pending, now time.Time, max int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweepLocked(now, max)
	if len(m.pending) >= max {
		return ErrStoreFull
	}
	m.pending[d] = memPending{kind: kind, p: p}
	return nil
}

func (m *memoryStore) TakeConsent(_ context.Context, d Digest, now time.Time) (Pending, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.pending[d]
	if !ok || e.kind != PendingConsent {
		return Pending{}, false, nil
	}
	delete(m.pending, d)
	return e.p, now.Before(e.p.Expires), nil
}

func (m *memoryStore) SpendCode(_ context.Context, d Digest, now, spentUntil time.Time) (Pending, bool, *Grant, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.pending[d]
	if ok && e.kind == PendingCode {
		delete(m.pending, d)
		m.spent[d] = spentCode{expires: spentUntil}
		return e.p, true, nil, nil
	}
	sp, ok := m.spent[d]
	if !ok || sp.grantID == "" || !now.Before(sp.expires) {
		return Pending{}, false, nil, nil
	}
	delete(m.spent, d)
	g := m.grants[sp.grantID]
	if g == nil {
		return Pending{}, false, nil, nil
	}
	m.revokeLocked(sp.grantID)
	gg := g.g
	return Pending{}, false, &gg, nil
}

func (m *memoryStore) CreateGrant(_ context.Context, g Grant, code Digest, t Tokens, now time.Time, max int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweepLocked(now, max)
	if len(m.grants) >= max {
		return ErrStoreFull
	}
	g.Scopes = g.Scopes.clone()
	if c, ok := m.clients[g.ClientID]; ok && !c.Expires.IsZero() {
		c.Expires = time.Time{} // a client that obtained a grant is kept
		m.clients[g.ClientID] = c
	}
	mg := &memGrant{g: g}
	m.grants[g.ID] = mg
	m.issueLocked(mg, t, now)
	if sp, ok := m.spent[code]; ok {
		sp.grantID = g.ID
		m.spent[code] = sp
	}
	return nil
}

// maxUsedRefresh is how many rotated refresh tokens are remembered per
// grant for reuse detection.
const maxUsedRefresh = 32

func (m *memoryStore) Rotate(_ context.Context, old Digest, clientID string, now time.Time, next Tokens) (Grant, RotateResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.refresh[old]
	switch {
	case e == nil:
		return Grant{}, RotateUnknown, nil
	case e.used:
		m.revokeLocked(e.grant.g.ID)
		return e.grant.g, RotateReused, nil
	case e.grant.g.ClientID != clientID:
		m.revokeLocked(e.grant.g.ID)
		return e.grant.g, RotateOtherClient, nil
	case !now.Before(e.expires):
		return e.grant.g, RotateExpired, nil
	}
	g := e.grant
	e.used = true
	g.used = append(g.used, old)
	if len(g.used) > maxUsedRefresh {
		delete(m.refresh, g.used[0])
		g.used = g.used[1:]
	}
	m.issueLocked(g, next, now)
	return g.g, RotateOK, nil
}

// issueLocked stores tokens t for g, forgetting g's expired access tokens.
func (m *memoryStore) issueLocked(g *memGrant, t Tokens, now time.Time) {
	live := g.access[:0]
	for _, d := range g.access {
		if e := m.access[d]; e != nil && now.Before(e.expires) {
			live = append(live, d)
		} else {
			delete(m.access, d)
		}
	}
	g.access = append(live, t.Access)
	m.access[t.Access] = &memToken{grant: g, expires: t.AccessExpires}
	g.refresh = t.Refresh
	m.refresh[t.Refresh] = &memToken{grant: g, expires: t.RefreshExpires}
}

func (m *memoryStore) Access(_ context.Context, d Digest) (Grant, time.Time, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.access[d]
	if e == nil {
		return Grant{}, time.Time{}, false, nil
	}
	g := e.grant.g
	g.Scopes = g.Scopes.clone()
	return g, e.expires, true, nil
}

func (m *memoryStore) GrantLive(_ context.Context, id string, now time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	g := m.grants[id]
	return g != nil && m.liveLocked(g, now), nil
}

func (m *memoryStore) liveLocked(g *memGrant, now time.Time) bool {
	if e := m.refresh[g.refresh]; e != nil && now.Before(e.expires) {
		return true
	}
	for _, d := range g.access {
		if e := m.access[d]; e != nil && now.Before(e.expires) {
			return true
		}
	}
	return false
}

func (m *memoryStore) RevokeClient(_ context.Context, clientID string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var ids []string
	for id, g := range m.grants {
		if g.g.ClientID == clientID {
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		m.revokeLocked(id)
	}
	return ids, nil
}

// revokeLocked deletes a grant and every token of it.
func (m *memoryStore) revokeLocked(id string) {
	g := m.grants[id]
	if g == nil {
		return
	}
	for _, d := range g.access {
		delete(m.access, d)
	}
	for _, d := range g.used {
		delete(m.refresh, d)
	}
	delete(m.refresh, g.refresh)
	delete(m.grants, id)
}

// sweepEvery is how often expired entries are dropped unless a table is
// full.
const sweepEvery = 30 * time.Second

// sweepLocked drops expired entries, at most every sweepEvery unless a
// table is full.
func (m *memoryStore) sweepLocked(now time.Time, max int) {
	full := len(m.grants) >= max || len(m.pending) >= max
	if !full && now.Sub(m.lastSweep) < sweepEvery {
		return
	}
	m.lastSweep = now
	for d, p := range m.pending {
		if !now.Before(p.p.Expires) {
			delete(m.pending, d)
		}
	}
	for d, s := range m.spent {
		if !now.Before(s.expires) {
			delete(m.spent, d)
		}
	}
	for id, g := range m.grants {
		if !m.liveLocked(g, now) {
			m.revokeLocked(id)
		}
	}
}
