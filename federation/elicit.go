package federation

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"sort"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Elicitation passes through by replay. A downstream that asks for input
// during a call has its question keyed by a digest of the question and
// handed up as the call's input request; the caller answers and calls
// again; the call is sent downstream afresh and, when the downstream asks
// the same question, the caller's answer is given. A downstream that
// keeps its state in requestState (protocol 2026-07-28) sees one call; an
// older one that asks mid-call runs the call's beginning again.

// elicitKeyPrefix names the gateway's input requests made for downstreams.
const elicitKeyPrefix = "rigout.downstream."

// errAskCaller ends a downstream's round so its question can go up.
var errAskCaller = errors.New("federation: the question goes to the caller")

type elicitKey struct{}

// elicitation is one proxied call's questions and the caller's answers.
type elicitation struct {
	answers mcp.InputResponses

	// mu protects the following.
	mu    sync.Mutex
	asked map[string]mcp.ElicitationParams
}

func questionKey(p mcp.ElicitationParams) string {
	b, _ := json.Marshal(p)
	sum := sha256.Sum256(b)
	return elicitKeyPrefix + hex.EncodeToString(sum[:12])
}

// Elicit answers a downstream's question with the caller's answer, or
// records it for the caller.
func (d *downstream) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	e, _ := ctx.Value(elicitKey{}).(*elicitation)
	if e == nil {
		return nil, errors.New("federation: a question outside a call is not passed on")
	}
	key := questionKey(req.Params)
	if ans := server.ElicitationResponse(e.answers, key); ans != nil {
		return ans, nil
	}
	e.mu.Lock()
	if e.asked == nil {
		e.asked = map[string]mcp.ElicitationParams{}
	}
	e.asked[key] = req.Params
	e.mu.Unlock()
	return nil, errAskCaller
}

// question returns the input requests to send up, or nil.
func (e *elicitation) question() *mcp.CallToolResult {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.asked) == 0 {
		return nil
	}
	keys := make([]string, 0, len(e.asked))
	for k := range e.asked {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b := server.NewInputRequestBuilder("")
	for _, k := range keys {
		b.Elicit(k, e.asked[k])
	}
	return b.ToolResult()
}
