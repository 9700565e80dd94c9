package rigout

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/auth"
)

// argsDigest returns the digest of a call's arguments: the ledger's own
// when it keys one (audit.ArgsDigester), else an HMAC under a random key
// of this gateway's.
func argsDigest(rec audit.Recorder) func(raw []byte) string {
	if d, ok := rec.(audit.ArgsDigester); ok {
		return d.DigestArgs
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key) // crypto/rand.Read does not fail
	return func(raw []byte) string { return audit.KeyedDigest(key, raw) }
}

// auditHealth is implemented by ledgers that can report their state.
type auditHealth interface {
	Healthy() error
}

// intentKey carries a call's pending intent row to AwaitIntent.
type intentKey struct{}

// pendingIntent is an intent row being written while the handler runs.
type pendingIntent struct {
	done chan struct{}
	err  error // set before done is closed
}

// errIntentNotDurable is what AwaitIntent returns when the row failed.
var errIntentNotDurable = errors.New("rigout: the audit ledger could not record the call's intent: not started")

// AwaitIntent waits until the intent row of ctx's call is durable, and
// returns an error if it could not be written: a command held for it
// must then not run. It returns nil at once outside a call whose tool set
// [Tool.HoldsForIntent] (its row was written before the handler ran), and
// when ctx ends first it returns ctx's error.
func AwaitIntent(ctx context.Context) error {
	p, _ := ctx.Value(intentKey{}).(*pendingIntent)
	if p == nil {
		return nil
	}
	select {
	case <-p.done:
		return p.err
	default:
	}
	select {
	case <-p.done:
		return p.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// runOverlapped is serve's last step for a tool that holds its commands
// for the intent row: the row is written while the handler prepares them
// (each waits in AwaitIntent before it is released), and the call ends
// as recordIntent would have ended it if the row could not be written.
func (g *Gateway) runOverlapped(ctx context.Context, call *Call, h Handler) *mcp.CallToolResult {
	e := g.intentEvent(ctx, call)
	p := &pendingIntent{done: make(chan struct{})}
	var recErr error
	go func() {
		recErr = g.cfg.Audit.Record(context.WithoutCancel(ctx), e)
		if recErr != nil && !g.cfg.UnsafeAuditBestEffort {
			p.err = fmt.Errorf("%w (%v)", errIntentNotDurable, recErr)
		}
		close(p.done)
	}()
	res := g.run(context.WithValue(ctx, intentKey{}, p), call, h)
	<-p.done
	// Without the row, nothing was released: the commands failed in
	// AwaitIntent.
	if failed := g.intentRecorded(ctx, call, recErr); failed != nil {
		return failed
	}
	return res
}

// intentEvent is the intent row of call.
func (g *Gateway) intentEvent(ctx context.Context, call *Call) audit.Event {
	e := g.baseEvent(ctx, call)
	e.Type = audit.TypeToolCall
	e.Phase = audit.PhaseIntent
	e.Status = audit.StatusStarted
	return e
}

// recordIntent commits the intent row of a call before it runs, read-only
// ones included: most run a process, and a gateway killed mid-call must
// leave a trace of it. If the row cannot be written the call does not run (fail
// closed), unless the gateway was configured with UnsafeAuditBestEffort;
// the result it returns is then the call's answer.
func (g *Gateway) recordIntent(ctx context.Context, call *Call) *mcp.CallToolResult {
	e := g.intentEvent(ctx, call)
	return g.intentRecorded(ctx, call, g.cfg.Audit.Record(context.WithoutCancel(ctx), e))
}

// intentRecorded settles call once its intent row was written, or could
// not be (err): it returns the call's answer when the call may not run
// (fail closed), and nil when it may, with or without the row
// (UnsafeAuditBestEffort).
func (g *Gateway) intentRecorded(ctx context.Context, call *Call, err error) *mcp.CallToolResult {
	if err != nil {
		g.auditFailed(ctx, err)
		if g.cfg.UnsafeAuditBestEffort {
			return nil
		}
		call.Outcome.Status = audit.StatusError
		call.Outcome.Error = "audit ledger unavailable"
		call.unaudited = true
		return ErrorResult("%s did not run: the audit ledger could not record it (%v). "+
			"The operator must fix the ledger (see /health)", call.Tool.Name, err)
	}
	call.intent = true
	g.auditErr.Store(nil)
	return nil
}

// recordDone writes the row that ends a call: its outcome, whatever the
// handler did (it is deferred by serve). A call that was refused before it
// ran has this row alone. If the row cannot be written, the result the
// caller gets says so instead of the tool's result: nothing is
// acknowledged without its row.
func (g *Gateway) recordDone(ctx context.Context, call *Call) *mcp.CallToolResult {
	e := g.baseEvent(ctx, call)
	e.Type = audit.TypeToolCall
	if call.Outcome.Status == audit.StatusDenied {
		e.Type = audit.TypeToolDenied
	}
	if call.intent || call.observes {
		e.Phase = audit.PhaseDone
	}
	o := &call.Outcome
	e.Status = o.Status
	e.Route = o.Route
	e.Decision = o.Decision
	e.Rule = o.Rule
	e.Bypassed = o.Bypassed
	e.ExitCode = o.ExitCode
	e.Signal = o.Signal
	e.StdoutBytes, e.StderrBytes = o.StdoutBytes, o.StderrBytes
	e.Truncated = o.Truncated
	e.Error = g.redact(o.Error)
	if o.Unsandboxed != "" || len(o.Detail) > 0 || call.observes {
		d := make(map[audit.DetailKey]string, len(o.Detail)+2)
		cs := call.maskSet()
		for k, v := range o.Detail {
			v = g.redact(v)
			if cs != nil {
				v = cs.Redact(v)
			}
			d[k] = v
		}
		if o.Unsandboxed != "" {
			d[audit.DetailUnsandboxed] = o.Unsandboxed
		}
		if call.observes {
			d[audit.DetailClass] = "read-only" // Tool.Observes classified the call
		}
		e.Detail = DetailJSON(d)
	}
	e.Duration = g.cfg.Now().Sub(call.Started)
	if e.Type == audit.TypeToolDenied && !call.intent && !g.admitRefusal("p\x00"+e.Principal, &e) {
		// Over the principal's refusal rows: counted, not written. A call
		// whose intent row is written always gets its done row.
		return nil
	}
	if err := g.cfg.Audit.Record(context.WithoutCancel(ctx), e); err != nil {
		g.auditFailed(ctx, err)
		if g.cfg.UnsafeAuditBestEffort || call.unaudited {
			return nil // the result already says the ledger failed
		}
		what := "ran"
		if o.ExitCode != nil {
			what = fmt.Sprintf("ran and exited %d", *o.ExitCode)
		}
		if !call.intent {
			return ErrorResult("%s was not recorded: the audit ledger failed (%v)", call.Tool.Name, err)
		}
		return ErrorResult("%s %s, but the audit ledger could not record its completion (%v); "+
			"its intent row (call %s) is in the ledger", call.Tool.Name, what, err, call.ID)
	}
	g.auditErr.Store(nil)
	return nil
}

// baseEvent holds what every row of one call shares. Both rows name the
// hosts the chain resolved, in one format: comma-separated.
func (g *Gateway) baseEvent(ctx context.Context, call *Call) audit.Event {
	if call.base != nil {
		return *call.base // the intent's, computed once for both rows
	}
	p := call.principal
	e := audit.Event{
		Time:       call.Started.UTC(),
		CallID:     call.ID,
		Principal:  p.Name,
		Transport:  audit.Transport(p.Transport),
		RemoteAddr: p.RemoteAddr,
		Tool:       call.Tool.Name,
		Host:       strings.Join(call.hosts, ","),
	}
	if s := server.ClientSessionFromContext(ctx); s != nil {
		e.Session = s.SessionID()
	}
	if raw, err := json.Marshal(call.Args); err == nil {
		e.ArgsDigest = g.digest(raw)
		switch {
		case g.cfg.AuditArgValues:
			e.Args = g.redact(string(raw))
		case len(call.Tool.Recorded) > 0:
			e.Args = g.redact(recordedArgs(call))
		}
	}
	call.base = &e
	return e
}

func (g *Gateway) auditFailed(ctx context.Context, err error) {
	g.auditErr.Store(&auditError{err: err})
	g.log.LogAttrs(ctx, slog.LevelError, "audit ledger write failed", slog.String("err", err.Error()))
}

// auditError is the last ledger failure, for Health.
type auditError struct{ err error }

// RecordEvent writes an event that is not a tool call (server.start,
// auth.failed, ssh.hostkey.learned, …) to the ledger, if there is one.
func (g *Gateway) RecordEvent(ctx context.Context, e audit.Event) error {
	if g.cfg.Audit == nil {
		return nil
	}
	if e.Time.IsZero() {
		e.Time = g.cfg.Now().UTC()
	}
	if err := g.cfg.Audit.Record(context.WithoutCancel(ctx), e); err != nil {
		g.auditFailed(ctx, err)
		return err
	}
	return nil
}

// RecordAuthEvent turns a security decision of package auth into a ledger
// row: a refusal (a bad credential, a throttled address, a refused Host or
// Origin) as denied, an approval or action (a setup token used, consent
// given, a grant issued, refreshed or revoked) as ok. Wire it as
// auth.Config.OnEvent.
func (g *Gateway) RecordAuthEvent(ctx context.Context, e auth.Event) {
	typ := audit.EventType(e.Type)
	status := audit.StatusOK
	if e.Refused() {
		status = audit.StatusDenied
	}
	if e.Type == auth.EventDenied {
		typ = audit.TypeAuthFailed
	}
	ev := audit.Event{
		Type:       typ,
		Principal:  e.Principal,
		Transport:  auth.TransportHTTP,
		RemoteAddr: e.RemoteAddr,
		Status:     status,
		Error:      e.Reason,
		Detail:     DetailJSON(map[audit.DetailKey]string{audit.DetailPath: e.Path, audit.DetailClientID: e.ClientID, audit.DetailGrantID: e.GrantID}),
	}
	if e.Refused() && !g.admitRefusal("a\x00"+addrOf(e.RemoteAddr), &ev) {
		return // over the address's refusal rows: counted, not written
	}
	_ = g.RecordEvent(ctx, ev)
}

// DetailJSON renders the non-empty entries of m as a JSON object for
// audit.Event.Detail, or "" when none is set. Its keys are the
// audit.DetailKey constants, or a tool's own keys converted to that type.
func DetailJSON(m map[audit.DetailKey]string) string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		if v != "" {
			out[string(k)] = v
		}
	}
	if len(out) == 0 {
		return ""
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// AuditState is the state of the gateway's audit ledger.
type AuditState string

// Audit states.
const (
	// AuditOff: no ledger is configured.
	AuditOff AuditState = "off"
	// AuditOK: the ledger records every call.
	AuditOK AuditState = "ok"
	// AuditFailing: the ledger cannot record, so calls that need a row are
	// refused.
	AuditFailing AuditState = "failing"
	// AuditDegraded: the ledger cannot record and calls run unaudited
	// (UnsafeAuditBestEffort).
	AuditDegraded AuditState = "degraded"
)

// Health is the gateway's state, for /health and get_server_activity.
type Health struct {
	// OK is false when the gateway cannot do what it promises: the ledger
	// cannot record.
	OK bool `json:"ok"`
	// Audit is the ledger's state.
	Audit AuditState `json:"audit"`
	// AuditError is the ledger's last failure, when it is failing.
	AuditError string `json:"audit_error,omitempty"`
}

// Fields returns h as the fields of a /health body (transport.HTTPConfig's
// Health).
func (h Health) Fields() map[string]any {
	m := map[string]any{"ok": h.OK, "audit": string(h.Audit)}
	if h.AuditError != "" {
		m["audit_error"] = h.AuditError
	}
	return m
}

// Health reports the gateway's state.
func (g *Gateway) Health() Health {
	if g.cfg.Audit == nil {
		return Health{OK: true, Audit: AuditOff}
	}
	var err error
	if ae := g.auditErr.Load(); ae != nil {
		err = ae.err
	} else if hl, ok := g.cfg.Audit.(auditHealth); ok {
		err = hl.Healthy()
	}
	switch {
	case err == nil:
		return Health{OK: true, Audit: AuditOK}
	case g.cfg.UnsafeAuditBestEffort:
		return Health{OK: false, Audit: AuditDegraded, AuditError: err.Error()}
	}
	return Health{OK: false, Audit: AuditFailing, AuditError: err.Error()}
}

// recordUnknownTool audits a tools/call for a name the registry does not
// hold; mcp-go answers it before any middleware runs.
func (g *Gateway) recordUnknownTool(ctx context.Context, id any, method mcp.MCPMethod, message any, err error) {
	if method != mcp.MethodToolsCall || !errors.Is(err, server.ErrToolNotFound) {
		return
	}
	name := ""
	if req, ok := message.(*mcp.CallToolRequest); ok {
		name = req.Params.Name
	}
	p := g.principalOf(ctx)
	e := audit.Event{
		Type:       audit.TypeToolDenied,
		CallID:     newCallID(),
		Principal:  p.Name,
		Transport:  audit.Transport(p.Transport),
		RemoteAddr: p.RemoteAddr,
		Tool:       ledgerName(name), // the client's text: cut short, with a digest
		Status:     audit.StatusUnknown,
		Error:      "unknown tool",
	}
	if !g.admitRefusal("p\x00"+p.Name, &e) {
		return
	}
	_ = g.RecordEvent(ctx, e)
}

// redact masks secrets in text bound for the ledger: the known ones and
// the patterns of package redact.
func (g *Gateway) redact(s string) string { return g.cfg.Secrets.Redact(s) }

// recordedArgs renders the call's [Tool.Recorded] arguments that it set,
// as a JSON object, or "" when it set none.
func recordedArgs(call *Call) string {
	m := make(map[string]any, len(call.Tool.Recorded))
	for _, name := range call.Tool.Recorded {
		if v, ok := call.Args[name]; ok {
			m[name] = v
		}
	}
	if len(m) == 0 {
		return ""
	}
	b, err := json.Marshal(m)
	if err != nil {
		return ""
	}
	return string(b)
}
