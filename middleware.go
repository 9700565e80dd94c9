package rigout

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/redact"
	"github.com/rigout/rigout/textsafe"
)

// serve runs one call through the chain. The order is fixed, and every
// step runs for every tool:
//
//  1. the done row and the log line are deferred first, so they are
//     written whatever happens below, a panic included;
//  2. the arguments: a JSON object that satisfies the tool's schema;
//  3. the tool scope, then the declarations: the action and its risk, the
//     hosts (selectors resolved) and the paths (resolved as the tool will
//     act on them);
//  4. scopes on them: writes, every host, every path, capabilities;
//  5. limits: calls in flight, then the rate of calls that run something;
//  6. the intent row, committed before the handler runs, read-only calls
//     included, since most run a process (a command the policy classified
//     read-only, a docker or ps listing): a gateway killed mid-call leaves
//     the intent row, which the next start reconciles (fail closed);
//  7. the embedder's middleware and the handler, with panics recovered.
func (g *Gateway) serve(ctx context.Context, call *Call, r *registered) (res *mcp.CallToolResult) {
	defer func() {
		// A panic in the chain itself is the last resort; the handler's
		// own panics are recovered in run.
		if p := recover(); p != nil {
			res = g.panicked(ctx, call, p)
		}
		res = g.mask(g.cfg.Secrets, res)
		if cs := call.maskSet(); cs != nil {
			res = g.mask(cs, res)
			call.Outcome.Error = cs.Redact(call.Outcome.Error)
		}
		g.settle(call, res)
		if g.cfg.Audit != nil {
			if ack := g.recordDone(ctx, call); ack != nil {
				res = ack
			}
		}
		g.logCall(ctx, call)
	}()
	if err := g.admit(ctx, call); err != nil {
		return g.refusal(call, err)
	}
	release, err := g.limits(call)
	if err != nil {
		return g.refusal(call, err)
	}
	defer release()
	if g.cfg.Audit != nil {
		if call.Tool.HoldsForIntent {
			return g.runOverlapped(ctx, call, r.handler)
		}
		if res := g.recordIntent(ctx, call); res != nil {
			return res
		}
	}
	return g.run(ctx, call, r.handler)
}

// admit checks the arguments, settles the declarations and checks them
// against the caller's scopes. The error is an *ArgumentError (invalid) or
// an *auth.ScopeError (denied).
func (g *Gateway) admit(ctx context.Context, call *Call) error {
	if call.argsErr != nil {
		return call.argsErr
	}
	if err := call.schema.check(call.Tool.Name, call.Args); err != nil {
		return err
	}
	// The tool scope first, so that a token that may not call the tool
	// learns nothing from how its hosts and paths would resolve.
	if err := call.principal.Scopes.RequireTool(call.Tool.Name); err != nil {
		return err
	}
	if err := call.resolveAction(); err != nil {
		return err
	}
	if err := call.resolveHosts(ctx); err != nil {
		return err
	}
	if err := call.resolvePaths(ctx); err != nil {
		return err
	}
	if call.Tool.Observes != nil && call.risk > ReadOnly {
		call.observes = call.Tool.Observes(ctx, call)
	}
	return call.authorize()
}

// run calls the handler (inside the embedder's middleware) and turns what
// it returns into a result. A panic becomes an error result; the stack goes
// to the operator's log, not to the client.
func (g *Gateway) run(ctx context.Context, call *Call, h Handler) (res *mcp.CallToolResult) {
	defer func() {
		if p := recover(); p != nil {
			res = g.panicked(ctx, call, p)
		}
	}()
	res, err := h(ctx, call)
	switch {
	case err != nil:
		return g.refusal(call, err)
	case res == nil:
		call.Outcome.Status = audit.StatusError
		return ErrorResult("%s returned no result", call.Tool.Name)
	}
	return res
}

func (g *Gateway) panicked(ctx context.Context, call *Call, p any) *mcp.CallToolResult {
	g.log.LogAttrs(ctx, slog.LevelError, "tool panicked",
		slog.String("tool", call.Tool.Name),
		slog.String("call", call.ID),
		slog.String("panic", fmt.Sprint(p)),
		slog.String("stack", string(debug.Stack())))
	call.Outcome.Status = audit.StatusError
	call.Outcome.Error = "internal error"
	return ErrorResult("internal error in %s (call %s); the operator's log has details", call.Tool.Name, call.ID)
}

// refusal turns an error into an error result with a redacted message, and
// classifies it for the ledger when the handler did not.
func (g *Gateway) refusal(call *Call, err error) *mcp.CallToolResult {
	var argErr *ArgumentError
	var scopeErr *auth.ScopeError
	var busyErr *BusyError
	var rateErr *RateLimitError
	switch {
	case call.Outcome.Status != "":
	case errors.As(err, &argErr):
		call.Outcome.Status = audit.StatusInvalid
	case errors.As(err, &scopeErr):
		call.Outcome.Status = audit.StatusDenied
	case errors.As(err, &busyErr):
		call.Outcome.Status = audit.StatusBusy
	case errors.As(err, &rateErr):
		call.Outcome.Status = audit.StatusLimited
	default:
		call.Outcome.Status = audit.StatusError
	}
	msg := g.redact(err.Error())
	if cs := call.maskSet(); cs != nil {
		msg = cs.Redact(msg)
	}
	if r, ok := refusalOf(err, msg); ok {
		return RefusalResult(r, msg)
	}
	return ErrorResult("%s", msg)
}

// settle fills in the outcome's status and error from the result when the
// handler did not.
func (g *Gateway) settle(call *Call, res *mcp.CallToolResult) {
	o := &call.Outcome
	if res == nil {
		if o.Status == "" {
			o.Status = audit.StatusError
		}
		return
	}
	if o.Status == "" {
		if res.IsError {
			o.Status = audit.StatusError
		} else {
			o.Status = audit.StatusOK
		}
	}
	if res.IsError && o.Error == "" {
		for _, c := range res.Content {
			if t, ok := c.(mcp.TextContent); ok {
				o.Error = textsafe.FirstLine(t.Text, 300)
				break
			}
		}
	}
}

// logCall writes the operator's log line for a call.
func (g *Gateway) logCall(ctx context.Context, call *Call) {
	level := slog.LevelInfo
	switch call.Outcome.Status {
	case audit.StatusOK, audit.StatusBackground, audit.StatusAwaitingConfirmation:
		// Handed off or waiting on a person is how such a call goes well.
	default:
		level = slog.LevelWarn
	}
	attrs := []slog.Attr{
		slog.String("tool", call.Tool.Name),
		slog.String("call", call.ID),
		slog.String("principal", call.principal.Name),
		slog.String("status", string(call.Outcome.Status)),
		slog.Duration("duration", g.cfg.Now().Sub(call.Started)),
		slog.String("route", call.Outcome.Route),
		slog.String("rule", call.Outcome.Rule),
	}
	if ran := (audit.Event{Args: recordedArgs(call)}).Ran(); ran != "" {
		// What ran, as the ledger keeps it: the operator's first question.
		ran = g.redact(textsafe.Block(ran, 500))
		if set := call.maskSet(); set != nil {
			ran = set.Redact(ran)
		}
		attrs = append(attrs, slog.String("ran", ran))
	}
	g.log.LogAttrs(ctx, level, "tool call", attrs...)
}

// principalOf returns who is calling: the principal the transport
// attached, or the gateway's default for direct clients.
func (g *Gateway) principalOf(ctx context.Context) auth.Principal {
	if p, ok := auth.FromContext(ctx); ok {
		return p
	}
	return *g.cfg.Principal
}

// mask removes set's secrets from a result: every text block, and every
// string in its structuredContent.
func (g *Gateway) mask(set *redact.Set, res *mcp.CallToolResult) *mcp.CallToolResult {
	if res == nil || set.Len() == 0 {
		return res
	}
	for i, c := range res.Content {
		if m, changed := maskContent(set, c); changed {
			res.Content[i] = m
		}
	}
	if res.StructuredContent != nil && !maskClean(set, res.StructuredContent) {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			res.StructuredContent = nil
			return res
		}
		// The JSON text holds every string, escaped: when no secret shows
		// in it, the common case, there is nothing to decode and walk.
		if set.Redact(string(b)) == string(b) {
			return res
		}
		var v any
		if err := json.Unmarshal(b, &v); err == nil && maskStrings(set, &v) {
			res.StructuredContent = v
		}
	}
	return res
}

// maskContent masks one content block: text, an embedded resource's text
// or (decoded) blob, a resource link's names, and an image or audio block
// whose decoded bytes hold a secret, which is withheld whole (masking a
// picture's bytes would only corrupt it). It reports whether c changed.
func maskContent(set *redact.Set, c mcp.Content) (mcp.Content, bool) {
	redactIn := func(p *string) bool {
		if m := set.Redact(*p); m != *p {
			*p = m
			return true
		}
		return false
	}
	switch x := c.(type) {
	case mcp.TextContent:
		return x, redactIn(&x.Text)
	case *mcp.TextContent:
		t := *x
		return &t, redactIn(&t.Text)
	case mcp.EmbeddedResource:
		r, changed := maskResource(set, x.Resource)
		x.Resource = r
		return x, changed
	case *mcp.EmbeddedResource:
		e := *x
		r, changed := maskResource(set, e.Resource)
		e.Resource = r
		return &e, changed
	case mcp.ResourceLink:
		a, b, d := redactIn(&x.URI), redactIn(&x.Name), redactIn(&x.Description)
		t := redactIn(&x.Title)
		return x, a || b || d || t
	case mcp.ImageContent:
		if blobHolds(set, x.Data) {
			return mcp.NewTextContent("[an image (" + x.MIMEType + ") was withheld: its data holds a credential's value]"), true
		}
	case mcp.AudioContent:
		if blobHolds(set, x.Data) {
			return mcp.NewTextContent("[audio (" + x.MIMEType + ") was withheld: its data holds a credential's value]"), true
		}
	}
	return c, false
}

// maskResource masks a resource's URI and text, or its blob decoded,
// masked and encoded again.
func maskResource(set *redact.Set, r mcp.ResourceContents) (mcp.ResourceContents, bool) {
	switch x := r.(type) {
	case mcp.TextResourceContents:
		u, t := set.Redact(x.URI), set.Redact(x.Text)
		changed := u != x.URI || t != x.Text
		x.URI, x.Text = u, t
		return x, changed
	case *mcp.TextResourceContents:
		return maskResource(set, *x)
	case mcp.BlobResourceContents:
		changed := false
		if u := set.Redact(x.URI); u != x.URI {
			x.URI, changed = u, true
		}
		if raw, err := base64.StdEncoding.DecodeString(x.Blob); err == nil {
			if m := set.Redact(string(raw)); m != string(raw) {
				x.Blob, changed = base64.StdEncoding.EncodeToString([]byte(m)), true
			}
		} else if m := set.Redact(x.Blob); m != x.Blob {
			x.Blob, changed = m, true
		}
		return x, changed
	case *mcp.BlobResourceContents:
		return maskResource(set, *x)
	}
	return r, false
}

// blobHolds reports whether base64 data, decoded (or as it is when it does
// not decode), holds anything set masks.
func blobHolds(set *redact.Set, data string) bool {
	if raw, err := base64.StdEncoding.DecodeString(data); err == nil {
		return set.Redact(string(raw)) != string(raw)
	}
	return set.Redact(data) != data
}

// maskStrings redacts every string in a decoded JSON value (object keys
// included), in place, and
// reports whether any changed.
func maskStrings(set *redact.Set, v *any) bool {
	changed := false
	switch x := (*v).(type) {
	case string:
		if m := set.Redact(x); m != x {
			*v, changed = m, true
		}
	case []any:
		for i := range x {
			if maskStrings(set, &x[i]) {
				changed = true
			}
		}
	case map[string]any:
		for k, e := range x {
			if maskStrings(set, &e) {
				x[k], changed = e, true
			}
			if m := set.Redact(k); m != k { // keys are text too
				delete(x, k)
				x[m], changed = e, true
			}
		}
	}
	return changed
}
