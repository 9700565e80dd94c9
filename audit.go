package rigout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/validate"
)

// AuditLedger is what the gateway needs of an audit ledger: the write side
// and the keyed digest of arguments. *sqlite.Ledger (package audit/sqlite)
// implements it. If the value also has Query (as *sqlite.Ledger does),
// get_server_activity reads recent events from it.
type AuditLedger interface {
	audit.Recorder
	DigestArgs(raw []byte) string
}

// auditQuerier is the read side get_server_activity uses.
type auditQuerier interface {
	Query(ctx context.Context, f audit.Filter) ([]audit.Event, error)
}

// auditHealth is implemented by ledgers that can report their state.
type auditHealth interface {
	Healthy() error
}

// auditCalls records every call in the ledger: an intent row committed
// before any tool that can change something runs, and a done row with the
// outcome after it ends, denied and invalid calls included. If the intent
// cannot be written the tool does not run (fail closed), unless the gateway
// was configured with UnsafeAuditBestEffort. Writes ignore the client's
// cancellation.
func (g *Gateway) auditCalls(next Handler) Handler {
	return func(ctx context.Context, call *Call) (*mcp.CallToolResult, error) {
		led := g.cfg.Audit
		wctx := context.WithoutCancel(ctx)
		base := g.baseEvent(ctx, call)
		wroteIntent := false
		if call.Tool.Risk >= Mutating {
			intent := base
			intent.Type = audit.TypeToolCall
			intent.Phase = audit.PhaseIntent
			intent.Status = "started"
			if err := led.Record(wctx, intent); err != nil {
				if !g.cfg.UnsafeAuditBestEffort {
					g.auditFailed(ctx, err)
					call.Outcome.Status = "error"
					call.Outcome.Error = "audit ledger unavailable"
					return ErrorResult("%s did not run: the audit ledger could not record it (%v). "+
						"The operator must fix the ledger (see /health)", call.Tool.Name, err), nil
				}
				g.auditFailed(ctx, err)
			} else {
				wroteIntent = true
				g.auditErr.Store(nil)
			}
		}

		res := g.finalize(ctx, call, next)

		done := base
		done.Type = audit.TypeToolCall
		if call.Outcome.Status == "denied" {
			done.Type = audit.TypeToolDenied
		}
		if wroteIntent {
			done.Phase = audit.PhaseDone
		}
		fillOutcome(&done, &call.Outcome)
		done.Duration = g.cfg.Now().Sub(call.Started)
		if err := led.Record(wctx, done); err != nil {
			g.auditFailed(ctx, err)
			if !g.cfg.UnsafeAuditBestEffort {
				// Nothing is acknowledged without its row: report the
				// failure instead of the result.
				what := "ran"
				if call.Outcome.ExitCode != nil {
					what = fmt.Sprintf("ran and exited %d", *call.Outcome.ExitCode)
				}
				return ErrorResult("%s %s, but the audit ledger could not record its completion (%v); "+
					"its intent row (call %s) is in the ledger", call.Tool.Name, what, err, call.ID), nil
			}
		} else {
			g.auditErr.Store(nil)
		}
		return res, nil
	}
}

// baseEvent holds what every row of one call shares.
func (g *Gateway) baseEvent(ctx context.Context, call *Call) audit.Event {
	p := g.principal(ctx)
	e := audit.Event{
		Time:       call.Started.UTC(),
		CallID:     call.ID,
		Principal:  p.Name,
		Transport:  p.Transport,
		RemoteAddr: p.RemoteAddr,
		Tool:       call.Tool.Name,
		Host:       hostArgument(call.Args),
	}
	if s := server.ClientSessionFromContext(ctx); s != nil {
		e.Session = s.SessionID()
	}
	if raw, err := json.Marshal(call.Args); err == nil {
		e.ArgsDigest = g.cfg.Audit.DigestArgs(raw)
		if g.cfg.AuditArgValues {
			e.Args = validate.Redact(string(raw))
		}
	}
	return e
}

// fillOutcome copies a call's outcome into its done row.
func fillOutcome(e *audit.Event, o *Outcome) {
	e.Status = audit.Status(o.Status)
	if o.Host != "" {
		e.Host = o.Host
	}
	e.Route = o.Route
	e.Decision = audit.Decision(o.Decision)
	e.Rule = o.Rule
	e.Bypassed = o.Bypassed
	e.ExitCode = o.ExitCode
	e.Signal = o.Signal
	e.StdoutBytes, e.StderrBytes = o.StdoutBytes, o.StderrBytes
	e.Truncated = o.Truncated
	e.Error = validate.Redact(o.Error)
}

// hostArgument returns the host a call names, for the ledger: the host
// argument, or the hosts of a fan-out joined by commas.
func hostArgument(args map[string]any) string {
	if h, ok := args["host"].(string); ok && h != "" {
		return h
	}
	if hs, ok := args["hosts"].([]any); ok {
		b, _ := json.Marshal(hs)
		return string(b)
	}
	return ""
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
// row. Wire it as auth.Config's event callback.
func (g *Gateway) RecordAuthEvent(ctx context.Context, e auth.Event) {
	typ := e.Type
	if typ == "auth.deny" {
		typ = audit.TypeAuthFailed
	}
	_ = g.RecordEvent(ctx, audit.Event{
		Type:       typ,
		Principal:  e.Principal,
		Transport:  auth.TransportHTTP,
		RemoteAddr: e.RemoteAddr,
		Status:     "denied",
		Error:      e.Reason,
		Detail:     detailJSON(map[string]string{"path": e.Path, "client_id": e.ClientID, "grant_id": e.GrantID}),
	})
}

func detailJSON(m map[string]string) string {
	for k, v := range m {
		if v == "" {
			delete(m, k)
		}
	}
	if len(m) == 0 {
		return ""
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// Health reports the gateway's state for /health: "ok" is false when the
// audit ledger cannot be written.
func (g *Gateway) Health() map[string]any {
	h := map[string]any{"ok": true}
	if g.cfg.Audit == nil {
		h["audit"] = "off"
		return h
	}
	h["audit"] = "ok"
	var err error
	if ae := g.auditErr.Load(); ae != nil {
		err = ae.err
	} else if hl, ok := g.cfg.Audit.(auditHealth); ok {
		err = hl.Healthy()
	}
	if err != nil {
		h["audit"] = "failing: " + err.Error()
		if g.cfg.UnsafeAuditBestEffort {
			h["audit"] = "degraded (calls run unaudited): " + err.Error()
		}
		h["ok"] = false
	}
	return h
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
	p := g.principal(ctx)
	_ = g.RecordEvent(ctx, audit.Event{
		Type:       audit.TypeToolDenied,
		CallID:     newCallID(),
		Principal:  p.Name,
		Transport:  p.Transport,
		RemoteAddr: p.RemoteAddr,
		Tool:       name,
		Status:     "unknown",
		Error:      "unknown tool",
	})
}

// recordHostKey audits a host key learned, refused or ignored by the SSH
// router: ssh.hostkey.learned, ssh.hostkey.mismatch, ….
func (g *Gateway) recordHostKey(ctx context.Context, ev exec.HostKeyEvent) {
	status := audit.StatusOK
	if ev.Kind != exec.HostKeyLearned {
		status = audit.StatusDenied
	}
	_ = g.RecordEvent(ctx, audit.Event{
		Type:      ev.Kind.String(),
		Time:      ev.Time.UTC(),
		Principal: ev.Principal,
		Host:      ev.Host,
		Route:     ev.Address,
		Status:    status,
		Detail:    detailJSON(map[string]string{"key_type": ev.KeyType, "fingerprint": ev.Fingerprint, "file": ev.File}),
	})
}
