package rigout

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// confirmKey names the gateway's elicitation among a call's input
// requests.
const confirmKey = "rigout.confirm"

// Bounds on the questions the gateway has asked and not yet seen answered.
const (
	// questionTTL is how long an answer to a question counts.
	questionTTL = 5 * time.Minute
	// maxOpenQuestions bounds the questions awaiting an answer,
	// gateway-wide; the oldest are forgotten first when it is reached.
	maxOpenQuestions = 4096
)

// Confirmation is what asking the person at the client came to.
type Confirmation int

const (
	// CannotAsk: the client declared no elicitation capability, so no
	// person can be asked through it. Turn to the operator (or refuse).
	CannotAsk Confirmation = iota + 1
	// Asking: the question is on its way. Return the result Confirm gave
	// as the call's result; the client asks the person and calls again
	// with the answer.
	Asking
	// Approved: the person accepted, in answer to a question this gateway
	// asked about exactly this call.
	Approved
	// Declined: the person declined, cancelled, or answered no.
	Declined
	// Untrusted: the operator did not declare this token's client a
	// person's own interactive client (auth.Scopes.InteractiveClient), so
	// no answer of its counts and nothing was asked. Turn to the operator
	// (or refuse).
	Untrusted
	// Unsolicited: the request carried an answer this gateway did not ask
	// for in this call — none was asked, or it was answered already, or
	// it expired, was altered, or asked about other arguments or another
	// principal. Refuse the call: nothing may run.
	Unsolicited
)

func (c Confirmation) String() string {
	switch c {
	case CannotAsk:
		return "cannot-ask"
	case Asking:
		return "asking"
	case Approved:
		return "approved"
	case Declined:
		return "declined"
	case Untrusted:
		return "untrusted"
	case Unsolicited:
		return "unsolicited"
	}
	return "Confirmation(?)"
}

// Confirm asks the person behind the client a yes-or-no question about
// this call, through MCP elicitation (the 2026-07-28 input requests; mcp-go
// turns them into elicitation/create for older clients). The answer
// arrives with the client's retry of the same call. While Asking, res is
// the result that carries the question: return it.
//
// An answer counts only when the operator declared the token's client a
// person's own interactive client (auth.Scopes.InteractiveClient), and
// only when it answers a question this gateway asked about this very
// call: the question's requestState carries a nonce and a digest of the
// principal, the tool, the exact arguments and the question, under an
// HMAC with the gateway's own random key; it expires after five minutes
// and is redeemed once. Anything else that looks like an answer is
// Unsolicited, whatever the token.
//
// The command gate (package gate) uses it for rules in confirm mode; a
// tool may use it for any decision a person should make.
func (c *Call) Confirm(ctx context.Context, question string) (state Confirmation, res *mcp.CallToolResult) {
	params := &c.Request.Params
	_, answered := params.InputResponses[confirmKey]
	if answered || params.RequestState != "" {
		if !c.principal.Scopes.InteractiveClient || !answered ||
			c.gw.questions.redeem(ctx, params.RequestState, c.confirmDigest(question), c.gw.cfg.Now()) != nil {
			return Unsolicited, nil
		}
		ans := server.ElicitationResponse(params.InputResponses, confirmKey)
		if ans == nil || ans.Action != mcp.ElicitationResponseActionAccept {
			return Declined, nil
		}
		if m, ok := ans.Content.(map[string]any); ok && m["confirm"] == true {
			return Approved, nil
		}
		return Declined, nil
	}
	if !c.principal.Scopes.InteractiveClient {
		return Untrusted, nil
	}
	if !clientCanElicit(ctx) {
		return CannotAsk, nil
	}
	st := c.gw.questions.issue(c.confirmDigest(question), c.gw.cfg.Now())
	res = server.NewInputRequestBuilder(st).Elicit(confirmKey, mcp.ElicitationParams{
		Message: question,
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"confirm": map[string]any{
					"type":        "boolean",
					"title":       "Allow it",
					"description": "Check to allow it; leave unchecked to refuse.",
				},
			},
			"required": []string{"confirm"},
		},
	}).ToolResult()
	return Asking, res
}

// CarriesAnswer reports whether the request carries an answer to one of
// the gateway's questions (or a requestState), asked for or not. A caller
// that will not ask the client (a bypass goes to the operator) refuses a
// call that carries one, as unsolicited.
func (c *Call) CarriesAnswer() bool {
	_, answered := c.Request.Params.InputResponses[confirmKey]
	return answered || c.Request.Params.RequestState != ""
}

// confirmDigest binds a question to this call: who calls, which tool,
// exactly which arguments, and the question itself (which names the
// command, the host and the rule).
func (c *Call) confirmDigest(question string) [32]byte {
	args, _ := json.Marshal(c.Args) // map keys are sorted: canonical
	h := sha256.New()
	for _, part := range []string{"rigout.confirm/1", c.principal.Name, c.principal.GrantID, c.Tool.Name, string(args), question} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write([]byte(part))
	}
	var d [32]byte
	copy(d[:], h.Sum(nil))
	return d
}

// clientCanElicit reports whether the calling client can be asked: it
// declared the elicitation capability per request under protocol
// 2026-07-28, or at initialize before. A --stateless gateway keeps no
// initialize, so a 2025-11-25 client there cannot be asked (and the
// answer to elicitation/create would have no session to come back to):
// the operator decides instead.
func clientCanElicit(ctx context.Context) bool {
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		return info.ClientCapabilities != nil && info.ClientCapabilities.Elicitation != nil
	}
	if s, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
		return s.GetClientCapabilities().Elicitation != nil
	}
	return false
}

// errBadAnswer is why an answer did not count; the caller learns only
// that it was unsolicited.
var errBadAnswer = errors.New("rigout: answer to a question not asked in this call")

// questions are the questions a gateway asked through elicitation and has
// not yet seen answered. It is safe for concurrent use.
type questions struct {
	key   []byte        // HMAC key: Config.ApprovalKey's, or random per gateway
	store ApprovalStore // where spent nonces are shared, or nil

	// mu protects the following.
	mu    sync.Mutex
	open  map[[16]byte]time.Time // nonce → expiry
	order [][16]byte             // nonces in issue order, for eviction
}

func newQuestions(key []byte, store ApprovalStore) *questions {
	return &questions{key: key, store: store, open: map[[16]byte]time.Time{}}
}

// issue records a new question bound to digest and returns its
// requestState: nonce, expiry and digest under the gateway's HMAC.
func (q *questions) issue(digest [32]byte, now time.Time) string {
	var nonce [16]byte
	_, _ = rand.Read(nonce[:])
	exp := now.Add(questionTTL)
	q.mu.Lock()
	q.sweepLocked(now)
	for (len(q.open) >= maxOpenQuestions || len(q.order) >= 2*maxOpenQuestions) && len(q.order) > 0 {
		delete(q.open, q.order[0])
		q.order = q.order[1:]
	}
	q.open[nonce] = exp
	q.order = append(q.order, nonce)
	q.mu.Unlock()
	var body [24]byte
	copy(body[:16], nonce[:])
	binary.BigEndian.PutUint64(body[16:], uint64(exp.Unix()))
	return "v1." + base64.RawURLEncoding.EncodeToString(body[:]) + "." + hex.EncodeToString(q.mac(body[:], digest))
}

// redeem checks state against digest and consumes its question: it
// answers a question issued by this gateway (or, with a shared store, by
// a gateway holding the same key), unaltered, unexpired, about the same
// digest, and not redeemed before (on any gateway sharing the store).
func (q *questions) redeem(ctx context.Context, state string, digest [32]byte, now time.Time) error {
	parts := strings.Split(state, ".")
	if len(parts) != 3 || parts[0] != "v1" {
		return errBadAnswer
	}
	body, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil || len(body) != 24 {
		return errBadAnswer
	}
	mac, err := hex.DecodeString(parts[2])
	if err != nil || !hmac.Equal(mac, q.mac(body, digest)) {
		return errBadAnswer
	}
	var nonce [16]byte
	copy(nonce[:], body[:16])
	expires := int64(binary.BigEndian.Uint64(body[16:]))
	if now.Unix() > expires {
		return errBadAnswer
	}
	if q.store != nil {
		// The MAC proves a gateway of the deployment asked it; the store
		// makes the answer count once across them.
		q.mu.Lock()
		delete(q.open, nonce)
		q.mu.Unlock()
		if ok, err := q.store.SpendNonce(ctx, nonce[:], time.Unix(expires, 0)); err != nil || !ok {
			return errBadAnswer
		}
		return nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	exp, ok := q.open[nonce]
	if !ok || now.After(exp) {
		return errBadAnswer
	}
	delete(q.open, nonce) // once
	return nil
}

func (q *questions) mac(body []byte, digest [32]byte) []byte {
	m := hmac.New(sha256.New, q.key)
	m.Write(body)
	m.Write(digest[:])
	return m.Sum(nil)
}

// sweepLocked forgets expired questions.
func (q *questions) sweepLocked(now time.Time) {
	i := 0
	for ; i < len(q.order); i++ {
		exp, ok := q.open[q.order[i]]
		if ok && !now.After(exp) {
			break
		}
		delete(q.open, q.order[i])
	}
	q.order = q.order[i:]
}
