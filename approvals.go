package rigout

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/auth"
)

// Defaults of [ApprovalConfig].
const (
	DefaultApprovalWait           = 2 * time.Minute
	DefaultMaxPendingApprovals    = 64
	DefaultMaxPendingPerPrincipal = 4
)

// ApprovalConfig configures the operator approval queue: a command the
// policy holds back (a rule in confirm mode, or a bypass a token may ask
// for) waits there until an operator approves or denies it out of band,
// with a token that has the approve scope and is not the caller's own.
type ApprovalConfig struct {
	// Wait is how long a held-back call waits for a decision; the call's
	// own context may end it sooner. An approval not decided by then is
	// expired: the call is refused, nothing runs. If zero,
	// DefaultApprovalWait (2 minutes).
	Wait time.Duration
	// MaxPending caps the pending approvals, gateway-wide. If zero,
	// DefaultMaxPendingApprovals (64).
	MaxPending int
	// MaxPendingPerPrincipal caps one principal's pending approvals, so no
	// principal fills the queue for all. If zero,
	// DefaultMaxPendingPerPrincipal (4).
	MaxPendingPerPrincipal int
	// Notify, if set, is called on its own goroutine with each new
	// pending approval (to page an operator, say). Its context ends when
	// the approval is decided or expires. It must not block forever.
	Notify func(ctx context.Context, p PendingApproval)
}

// ApprovalStore keeps what the gateways of one deployment share about
// approvals (Config.ApprovalStore): the operator approval queue and the
// spent elicitation answers. Times are the gateways' clocks, passed in.
// Its errors fail closed: a call whose approval cannot be stored or read
// back does not run, an answer that cannot be marked spent does not count.
type ApprovalStore interface {
	// PutApproval stores a pending approval.
	PutApproval(ctx context.Context, r audit.ApprovalRecord) error
	// PendingApprovals returns the undecided approvals unexpired at now,
	// oldest first.
	PendingApprovals(ctx context.Context, now time.Time) ([]audit.ApprovalRecord, error)
	// Approval returns approval id; found is false when there is none.
	Approval(ctx context.Context, id string) (r audit.ApprovalRecord, found bool, err error)
	// DecideApproval records a decision on id, once: only while id is
	// undecided and unexpired at now, its digest is digest and its
	// principal is not approver. It reports whether it did.
	DecideApproval(ctx context.Context, id, digest, approver string, approve bool, mac []byte, now time.Time) (bool, error)
	// EndApproval deletes approval id and returns it as it was, decided
	// or not; found is false when there is none.
	EndApproval(ctx context.Context, id string) (r audit.ApprovalRecord, found bool, err error)
	// SpendNonce marks the nonce of an elicitation question answered, to
	// be remembered until expires (its question's expiry); it reports
	// false when the nonce was spent already.
	SpendNonce(ctx context.Context, nonce []byte, expires time.Time) (bool, error)
}

// approvalPoll is how often a call waiting on a shared queue looks for
// its decision.
const approvalPoll = 200 * time.Millisecond

func (c *ApprovalConfig) setDefaults() {
	if c.Wait <= 0 {
		c.Wait = DefaultApprovalWait
	}
	if c.MaxPending <= 0 {
		c.MaxPending = DefaultMaxPendingApprovals
	}
	if c.MaxPendingPerPrincipal <= 0 {
		c.MaxPendingPerPrincipal = DefaultMaxPendingPerPrincipal
	}
}

// ApprovalRequest is what a held-back call asks an operator to approve.
type ApprovalRequest struct {
	// Host is where the command runs, as the operator should read it.
	Host string
	// Command is the exact command, as the caller gave it.
	Command string
	// Dir is the resolved working directory, if any.
	Dir string
	// Rule and Reason are why the policy held it back.
	Rule, Reason string
	// Bypass is set when the caller asked to skip the policy.
	Bypass bool
}

// PendingApproval is a held-back call waiting for an operator.
type PendingApproval struct {
	ID        string `json:"id"`
	Call      string `json:"call"`
	Principal string `json:"principal"`
	Tool      string `json:"tool"`
	Host      string `json:"host"`
	Command   string `json:"command"`
	Dir       string `json:"dir,omitempty"`
	Rule      string `json:"rule"`
	Reason    string `json:"reason"`
	Bypass    bool   `json:"bypass,omitempty"`
	// Digest binds the approval to exactly this command, these arguments
	// and this caller (a keyed digest: it reveals nothing of them). The
	// approver sends it back, and the call checks it again before it runs.
	Digest    string    `json:"digest"`
	Requested time.Time `json:"requested"`
	Expires   time.Time `json:"expires"`
}

// Approval is an operator's approval of one held-back call.
type Approval struct {
	// ID is the approval's ID, Approver the deciding token's name and
	// Digest the approved command's digest.
	ID, Approver, Digest string
}

// ApprovalOutcome is why a held-back call was not approved.
type ApprovalOutcome string

// Outcomes of [ApprovalError].
const (
	ApprovalDenied    ApprovalOutcome = "denied"     // an operator denied it
	ApprovalExpired   ApprovalOutcome = "expired"    // no operator decided in time
	ApprovalQueueFull ApprovalOutcome = "queue-full" // too many pending approvals
	ApprovalCanceled  ApprovalOutcome = "canceled"   // the call ended while it waited
)

// ApprovalError reports a held-back call that was not approved.
type ApprovalError struct {
	ID       string
	Outcome  ApprovalOutcome
	Approver string        // who denied it (ApprovalDenied)
	Wait     time.Duration // how long it waited (ApprovalExpired)
}

// Error implements error.
func (e *ApprovalError) Error() string {
	switch e.Outcome {
	case ApprovalDenied:
		return fmt.Sprintf("rigout: approval %s: denied by %s", e.ID, e.Approver)
	case ApprovalExpired:
		return fmt.Sprintf("rigout: approval %s: no operator decided within %s", e.ID, e.Wait)
	case ApprovalQueueFull:
		return "rigout: the approval queue is full (too many pending approvals for this token or in all)"
	}
	return fmt.Sprintf("rigout: approval %s: the call ended while it waited", e.ID)
}

// Errors of the approval queue.
var (
	// ErrNoApprovals means the gateway has no approval queue
	// (Config.Approvals is nil).
	ErrNoApprovals = errors.New("rigout: no operator approval queue")
	// ErrApprovalNotFound means no pending approval has that ID: it never
	// existed, or it was decided or expired.
	ErrApprovalNotFound = errors.New("rigout: no such pending approval (unknown, already decided, or expired)")
	// ErrSelfApproval means a token tried to decide its own call.
	ErrSelfApproval = errors.New("rigout: a token cannot decide its own call")
	// ErrApprovalDigest means the digest sent with a decision is not the
	// pending command's.
	ErrApprovalDigest = errors.New("rigout: the digest does not match the pending command")
	// ErrForgedDecision means a decision read from the shared store does
	// not carry the MAC a gateway holding the approval key computes: it
	// was not made through a gateway.
	ErrForgedDecision = errors.New("rigout: the decision in the approval store was not made by a gateway (bad MAC); nothing runs")
)

// approvalQueue holds the pending approvals. It is safe for concurrent use.
type approvalQueue struct {
	cfg   ApprovalConfig
	key   []byte        // digest key
	store ApprovalStore // the shared queue, or nil

	// mu protects the following.
	mu      sync.Mutex
	pending map[string]*pendingEntry
	per     map[string]int // principal → pending
	shared  int            // this gateway's calls waiting on the shared queue
}

type pendingEntry struct {
	p      PendingApproval
	answer chan decision // buffered 1; sent once, under mu
}

type decision struct {
	approve  bool
	approver string
}

// minApprovalKey is the shortest Config.ApprovalKey accepted.
const minApprovalKey = 32

// DeriveApprovalKey returns the [Config.ApprovalKey] of the gateways that
// share a ledger chain key: HMAC-SHA256 under chainKey of
// "rigout.approval-key.v1". Replicas that hold the same chain key then
// sign and check approvals alike, and the approval key reveals nothing of
// the chain key.
func DeriveApprovalKey(chainKey []byte) []byte {
	m := hmac.New(sha256.New, chainKey)
	m.Write([]byte("rigout.approval-key.v1"))
	return m.Sum(nil)
}

// approvalSubkey is the key of one use (purpose) of the approval key, or
// a random key when there is none.
func approvalSubkey(key []byte, purpose string) []byte {
	if key == nil {
		k := make([]byte, 32)
		_, _ = rand.Read(k) // crypto/rand.Read does not fail
		return k
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(purpose))
	return m.Sum(nil)
}

func newApprovalQueue(cfg ApprovalConfig, key []byte, store ApprovalStore) *approvalQueue {
	cfg.setDefaults()
	return &approvalQueue{cfg: cfg, key: key, store: store, pending: map[string]*pendingEntry{}, per: map[string]int{}}
}

// approvalDigest is the keyed digest of exactly what is approved.
func (q *approvalQueue) digest(c *Call, r ApprovalRequest) string {
	args, _ := json.Marshal(c.Args)
	m := hmac.New(sha256.New, q.key)
	for _, part := range []string{"rigout.approval/1", c.principal.Name, c.principal.GrantID, c.Tool.Name, string(args),
		r.Host, r.Dir, r.Command, r.Rule, fmt.Sprint(r.Bypass)} {
		fmt.Fprintf(m, "%d:%s", len(part), part)
	}
	return hex.EncodeToString(m.Sum(nil)[:16])
}

// AwaitApproval puts the call in the gateway's approval queue and waits
// until an operator approves or denies it, the queue's wait ends, or ctx
// does. It returns the approval, or an error: [ErrNoApprovals] when the
// gateway has no queue, an [*ApprovalError] otherwise. An approval is for
// this call alone and for exactly r: the caller runs what it asked about
// and nothing else. The decision and the approver are recorded on the
// call's Outcome.Detail.
func (c *Call) AwaitApproval(ctx context.Context, r ApprovalRequest) (Approval, error) {
	q := c.gw.approvals
	if q == nil {
		return Approval{}, ErrNoApprovals
	}
	now := c.gw.cfg.Now()
	var id [8]byte
	_, _ = rand.Read(id[:])
	e := &pendingEntry{
		p: PendingApproval{
			ID: hex.EncodeToString(id[:]), Call: c.ID, Principal: c.principal.Name, Tool: c.Tool.Name,
			Host: r.Host, Command: r.Command, Dir: r.Dir, Rule: r.Rule, Reason: r.Reason, Bypass: r.Bypass,
			Digest: q.digest(c, r), Requested: now, Expires: now.Add(q.cfg.Wait),
		},
		answer: make(chan decision, 1),
	}
	q.mu.Lock()
	if len(q.pending)+q.shared >= q.cfg.MaxPending || q.per[e.p.Principal] >= q.cfg.MaxPendingPerPrincipal {
		q.mu.Unlock()
		return Approval{}, &ApprovalError{Outcome: ApprovalQueueFull}
	}
	shared := q.store != nil
	if !shared {
		q.pending[e.p.ID] = e
	} else {
		q.shared++
	}
	q.per[e.p.Principal]++
	q.mu.Unlock()
	if shared {
		defer q.endShared(e.p.Principal)
	}
	c.setDetail(audit.DetailApproval, e.p.ID)
	c.setDetail(audit.DetailApprovalDigest, e.p.Digest)

	waitCtx, cancel := context.WithTimeout(ctx, q.cfg.Wait)
	defer cancel()
	if shared {
		body, _ := json.Marshal(e.p)
		if err := q.store.PutApproval(ctx, audit.ApprovalRecord{ID: e.p.ID, Principal: e.p.Principal, Digest: e.p.Digest,
			Body: body, Requested: e.p.Requested, Expires: e.p.Expires}); err != nil {
			return Approval{}, fmt.Errorf("rigout: approval %s: the shared queue: %w", e.p.ID, err)
		}
	}
	if q.cfg.Notify != nil {
		go q.cfg.Notify(waitCtx, e.p)
	}
	c.gw.log.LogAttrs(ctx, slog.LevelWarn, "held-back call waits for an operator",
		slog.String("approval", e.p.ID), slog.String("call", c.ID), slog.String("principal", e.p.Principal), slog.String("rule", r.Rule))

	var d decision
	if shared {
		var err error
		if d, err = q.waitShared(ctx, waitCtx, e.p); err != nil {
			return Approval{}, err
		}
	} else {
		select {
		case d = <-e.answer:
		case <-waitCtx.Done():
			q.mu.Lock()
			if _, still := q.pending[e.p.ID]; still {
				q.removeLocked(e)
				q.mu.Unlock()
				if ctx.Err() != nil {
					return Approval{}, &ApprovalError{ID: e.p.ID, Outcome: ApprovalCanceled}
				}
				return Approval{}, &ApprovalError{ID: e.p.ID, Outcome: ApprovalExpired, Wait: q.cfg.Wait}
			}
			q.mu.Unlock()
			d = <-e.answer // decided just as the wait ended: the decision stands
		}
	}
	if !d.approve {
		c.setDetail(audit.DetailDeniedBy, d.approver)
		return Approval{}, &ApprovalError{ID: e.p.ID, Outcome: ApprovalDenied, Approver: d.approver}
	}
	// The approval is for exactly what was asked: check it again against
	// what this call holds now.
	if q.digest(c, r) != e.p.Digest {
		return Approval{}, ErrApprovalDigest
	}
	c.setDetail(audit.DetailApprovedBy, d.approver)
	return Approval{ID: e.p.ID, Approver: d.approver, Digest: e.p.Digest}, nil
}

// waitShared waits for the decision on p in the shared store until
// waitCtx ends, then takes the approval out of the store: a decision made
// by then stands, whose MAC must verify.
func (q *approvalQueue) waitShared(ctx, waitCtx context.Context, p PendingApproval) (decision, error) {
	st := q.store
	tick := time.NewTicker(approvalPoll)
	defer tick.Stop()
poll:
	for {
		select {
		case <-waitCtx.Done():
			break poll
		case <-tick.C:
			if r, found, err := st.Approval(waitCtx, p.ID); err == nil && (!found || r.Decided) {
				break poll
			}
		}
	}
	r, found, err := st.EndApproval(context.WithoutCancel(ctx), p.ID)
	switch {
	case err != nil:
		return decision{}, fmt.Errorf("rigout: approval %s: the shared queue: %w", p.ID, err)
	case !found || !r.Decided:
		if ctx.Err() != nil {
			return decision{}, &ApprovalError{ID: p.ID, Outcome: ApprovalCanceled}
		}
		return decision{}, &ApprovalError{ID: p.ID, Outcome: ApprovalExpired, Wait: q.cfg.Wait}
	case r.Digest != p.Digest || r.Principal != p.Principal || r.Approver == p.Principal ||
		!hmac.Equal(r.MAC, q.decisionMAC(p.ID, p.Digest, r.Approver, r.Approved)):
		return decision{}, ErrForgedDecision
	}
	return decision{approve: r.Approved, approver: r.Approver}, nil
}

// decisionMAC is what a gateway writes with a decision in the shared
// store, under the approval digest key the gateways share.
func (q *approvalQueue) decisionMAC(id, digest, approver string, approve bool) []byte {
	m := hmac.New(sha256.New, q.key)
	for _, part := range []string{"rigout.approval-decision/1", id, digest, approver, fmt.Sprint(approve)} {
		fmt.Fprintf(m, "%d:%s", len(part), part)
	}
	return m.Sum(nil)
}

// endShared releases the caps a call waiting on the shared queue held.
func (q *approvalQueue) endShared(principal string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.shared--
	if q.per[principal]--; q.per[principal] <= 0 {
		delete(q.per, principal)
	}
}

func (q *approvalQueue) removeLocked(e *pendingEntry) {
	delete(q.pending, e.p.ID)
	if q.per[e.p.Principal]--; q.per[e.p.Principal] <= 0 {
		delete(q.per, e.p.Principal)
	}
}

// setDetail adds a fact to the call's ledger detail.
func (c *Call) setDetail(k audit.DetailKey, v string) {
	if c.Outcome.Detail == nil {
		c.Outcome.Detail = map[audit.DetailKey]string{}
	}
	c.Outcome.Detail[k] = v
}

// PendingApprovals returns the calls waiting for an operator, oldest
// first, for approver, who must hold the approve scope. Its own calls are
// listed too (marked by Principal), though it cannot decide them. With a
// shared queue (Config.ApprovalStore) it lists every gateway's.
func (g *Gateway) PendingApprovals(ctx context.Context, approver auth.Principal) ([]PendingApproval, error) {
	if err := approver.Scopes.RequireApprove(); err != nil {
		return nil, err
	}
	q := g.approvals
	if q == nil {
		return nil, ErrNoApprovals
	}
	now := g.cfg.Now()
	if q.store != nil {
		return g.sharedPending(ctx, now)
	}
	q.mu.Lock()
	out := make([]PendingApproval, 0, len(q.pending))
	for _, e := range q.pending {
		if now.Before(e.p.Expires) {
			out = append(out, e.p)
		}
	}
	q.mu.Unlock()
	slices.SortFunc(out, func(a, b PendingApproval) int { return a.Requested.Compare(b.Requested) })
	return out, nil
}

// DecideApproval approves (approve true) or denies the pending approval
// id on behalf of approver, which must hold the approve scope and must not
// be the caller whose call waits. digest must be the pending approval's
// Digest, as the approver was shown it. A decision is taken once: the
// approval then leaves the queue. It is recorded in the ledger
// (approval.decide: the approver, the decision, the digest), and returns
// the approval decided.
func (g *Gateway) DecideApproval(ctx context.Context, approver auth.Principal, id, digest string, approve bool) (PendingApproval, error) {
	if err := approver.Scopes.RequireApprove(); err != nil {
		return PendingApproval{}, err
	}
	q := g.approvals
	if q == nil {
		return PendingApproval{}, ErrNoApprovals
	}
	if q.store != nil {
		p, err := g.decideShared(ctx, approver, id, digest, approve)
		if err != nil {
			return p, err
		}
		g.recordDecision(ctx, approver, p, approve)
		return p, nil
	}
	q.mu.Lock()
	e, ok := q.pending[id]
	switch {
	case !ok || !g.cfg.Now().Before(e.p.Expires):
		q.mu.Unlock()
		return PendingApproval{}, ErrApprovalNotFound
	case approver.Name == e.p.Principal:
		q.mu.Unlock()
		return PendingApproval{}, ErrSelfApproval
	case !hmac.Equal([]byte(strings.ToLower(digest)), []byte(e.p.Digest)):
		q.mu.Unlock()
		return PendingApproval{}, ErrApprovalDigest
	}
	q.removeLocked(e)
	e.answer <- decision{approve: approve, approver: approver.Name}
	q.mu.Unlock()
	g.recordDecision(ctx, approver, e.p, approve)
	return e.p, nil
}

// recordDecision logs and records an operator's decision.
func (g *Gateway) recordDecision(ctx context.Context, approver auth.Principal, p PendingApproval, approve bool) {
	id := p.ID
	dec := audit.DecisionDeclined
	if approve {
		dec = audit.DecisionConfirmed
	}
	g.log.LogAttrs(ctx, slog.LevelWarn, "held-back call decided by an operator",
		slog.String("approval", id), slog.String("call", p.Call), slog.String("approver", approver.Name), slog.String("decision", string(dec)))
	_ = g.RecordEvent(ctx, audit.Event{
		Type: audit.TypeApprovalDecide, Principal: approver.Name, Transport: audit.Transport(approver.Transport), RemoteAddr: approver.RemoteAddr,
		Tool: p.Tool, Host: p.Host, Decision: dec, Rule: p.Rule, Bypassed: p.Bypass && approve, Status: audit.StatusOK,
		Detail: DetailJSON(map[audit.DetailKey]string{audit.DetailApproval: id, audit.DetailCall: p.Call, audit.DetailFor: p.Principal, audit.DetailDigest: p.Digest}),
	})
}

// sharedPending lists the shared queue's pending approvals.
func (g *Gateway) sharedPending(ctx context.Context, now time.Time) ([]PendingApproval, error) {
	rs, err := g.approvals.store.PendingApprovals(ctx, now)
	if err != nil {
		return nil, fmt.Errorf("rigout: the shared approval queue: %w", err)
	}
	out := make([]PendingApproval, 0, len(rs))
	for _, r := range rs {
		if p, ok := sharedBody(r); ok {
			out = append(out, p)
		}
	}
	return out, nil
}

// sharedBody decodes a stored approval, which must agree with its row.
func sharedBody(r audit.ApprovalRecord) (PendingApproval, bool) {
	var p PendingApproval
	if json.Unmarshal(r.Body, &p) != nil || p.ID != r.ID || p.Principal != r.Principal || p.Digest != r.Digest {
		return PendingApproval{}, false
	}
	return p, true
}

// decideShared decides approval id in the shared store, with the same
// checks as the local queue, and a MAC the waiting gateway verifies.
func (g *Gateway) decideShared(ctx context.Context, approver auth.Principal, id, digest string, approve bool) (PendingApproval, error) {
	q := g.approvals
	now := g.cfg.Now()
	r, found, err := q.store.Approval(ctx, id)
	if err != nil {
		return PendingApproval{}, fmt.Errorf("rigout: the shared approval queue: %w", err)
	}
	p, ok := sharedBody(r)
	switch {
	case !found || !ok || r.Decided || !now.Before(r.Expires):
		return PendingApproval{}, ErrApprovalNotFound
	case approver.Name == r.Principal:
		return PendingApproval{}, ErrSelfApproval
	case !hmac.Equal([]byte(strings.ToLower(digest)), []byte(r.Digest)):
		return PendingApproval{}, ErrApprovalDigest
	}
	done, err := q.store.DecideApproval(ctx, id, r.Digest, approver.Name, approve, q.decisionMAC(id, r.Digest, approver.Name, approve), now)
	if err != nil {
		return PendingApproval{}, fmt.Errorf("rigout: the shared approval queue: %w", err)
	}
	if !done {
		return PendingApproval{}, ErrApprovalNotFound // decided or withdrawn meanwhile
	}
	return p, nil
}

// ApprovalsHandler serves the approvals API to operators. Wrap it in the
// bearer check (auth.Front.RequireBearer), which puts the principal in the
// request's context; the principal must hold the approve scope.
//
//	GET  → {"approvals": [PendingApproval…]}
//	POST {"id": ID, "decision": "approve"|"deny", "digest": DIGEST} → the PendingApproval decided
//
// Errors are {"error": text} with 403 (scope, own call), 404 (no such
// pending approval), 409 (digest mismatch), 400 (bad request) or 503 (no
// queue).
func (g *Gateway) ApprovalsHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := auth.FromContext(r.Context())
		if !ok {
			approvalJSON(w, http.StatusUnauthorized, map[string]string{"error": "no authenticated principal"})
			return
		}
		switch r.Method {
		case http.MethodGet:
			list, err := g.PendingApprovals(r.Context(), p)
			if err != nil {
				approvalError(w, err)
				return
			}
			approvalJSON(w, http.StatusOK, map[string]any{"approvals": list})
		case http.MethodPost:
			var req struct {
				ID       string `json:"id"`
				Decision string `json:"decision"`
				Digest   string `json:"digest"`
			}
			dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&req); err != nil {
				approvalJSON(w, http.StatusBadRequest, map[string]string{"error": "body: " + err.Error()})
				return
			}
			if req.Decision != "approve" && req.Decision != "deny" {
				approvalJSON(w, http.StatusBadRequest, map[string]string{"error": `decision must be "approve" or "deny"`})
				return
			}
			if req.ID == "" || req.Digest == "" {
				approvalJSON(w, http.StatusBadRequest, map[string]string{"error": "id and digest are required"})
				return
			}
			pa, err := g.DecideApproval(r.Context(), p, req.ID, req.Digest, req.Decision == "approve")
			if err != nil {
				approvalError(w, err)
				return
			}
			approvalJSON(w, http.StatusOK, pa)
		default:
			w.Header().Set("Allow", "GET, POST")
			approvalJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "GET or POST"})
		}
	})
}

func approvalError(w http.ResponseWriter, err error) {
	var scopeErr *auth.ScopeError
	code := http.StatusInternalServerError
	switch {
	case errors.As(err, &scopeErr), errors.Is(err, ErrSelfApproval):
		code = http.StatusForbidden
	case errors.Is(err, ErrApprovalNotFound):
		code = http.StatusNotFound
	case errors.Is(err, ErrApprovalDigest):
		code = http.StatusConflict
	case errors.Is(err, ErrNoApprovals):
		code = http.StatusServiceUnavailable
	}
	approvalJSON(w, code, map[string]string{"error": err.Error()})
}

func approvalJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
