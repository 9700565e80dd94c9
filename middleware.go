package rigout

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/validate"
)

// recoverPanics turns a panicking handler into an error result. The stack
// goes to the operator's log, not to the client.
func (g *Gateway) recoverPanics(next Handler) Handler {
	return func(ctx context.Context, call *Call) (res *mcp.CallToolResult, err error) {
		defer func() {
			if p := recover(); p != nil {
				g.log.LogAttrs(ctx, slog.LevelError, "tool panicked",
					slog.String("tool", call.Tool.Name),
					slog.String("call", call.ID),
					slog.String("panic", fmt.Sprint(p)),
					slog.String("stack", string(debug.Stack())))
				call.Outcome.Status = "error"
				call.Outcome.Error = "internal error"
				res, err = ErrorResult("internal error in %s (call %s); the operator's log has details", call.Tool.Name, call.ID), nil
			}
		}()
		return next(ctx, call)
	}
}

// finalize runs next and turns what it returns into a result: an error
// becomes an error result with a redacted message, and the call's outcome
// is settled from the result.
func (g *Gateway) finalize(ctx context.Context, call *Call, next Handler) *mcp.CallToolResult {
	res, err := next(ctx, call)
	if err != nil {
		var argErr *ArgumentError
		var scopeErr *auth.ScopeError
		switch {
		case call.Outcome.Status != "":
		case errors.As(err, &argErr):
			call.Outcome.Status = "invalid"
		case errors.As(err, &scopeErr):
			call.Outcome.Status = "denied"
		}
		res = ErrorResult("%s", validate.Redact(err.Error()))
	}
	settle(&call.Outcome, res)
	return res
}

// observe times every call, settles its outcome and logs it. Error texts
// are redacted before anyone sees them.
func (g *Gateway) observe(next Handler) Handler {
	return func(ctx context.Context, call *Call) (*mcp.CallToolResult, error) {
		res := g.finalize(ctx, call, next)
		d := g.cfg.Now().Sub(call.Started)
		level := slog.LevelInfo
		if call.Outcome.Status != "ok" {
			level = slog.LevelWarn
		}
		g.log.LogAttrs(ctx, level, "tool call",
			slog.String("tool", call.Tool.Name),
			slog.String("call", call.ID),
			slog.String("status", call.Outcome.Status),
			slog.Duration("duration", d),
			slog.String("route", call.Outcome.Route),
			slog.String("rule", call.Outcome.Rule))
		return res, nil
	}
}

// settle fills in the outcome's status and error from the result when the
// handler did not.
func settle(o *Outcome, res *mcp.CallToolResult) {
	if res == nil {
		if o.Status == "" {
			o.Status = "error"
		}
		return
	}
	if o.Status == "" {
		if res.IsError {
			o.Status = "error"
		} else {
			o.Status = "ok"
		}
	}
	if res.IsError && o.Error == "" {
		for _, c := range res.Content {
			if t, ok := c.(mcp.TextContent); ok {
				o.Error = firstLine(t.Text, 300)
				break
			}
		}
	}
}

// checkArgs refuses arguments that do not satisfy the tool's input schema,
// naming the argument at fault, before the handler runs.
func (g *Gateway) checkArgs(next Handler) Handler {
	return func(ctx context.Context, call *Call) (*mcp.CallToolResult, error) {
		if call.argsErr != nil {
			call.Outcome.Status = "invalid"
			return nil, call.argsErr
		}
		if err := call.schema.check(call.Tool.Name, call.Args); err != nil {
			call.Outcome.Status = "invalid"
			return nil, err
		}
		return next(ctx, call)
	}
}

// principal returns who is calling: the principal the transport attached,
// or the gateway's default for direct clients.
func (g *Gateway) principal(ctx context.Context) auth.Principal {
	if p, ok := auth.FromContext(ctx); ok {
		return p
	}
	return *g.cfg.Principal
}

// authorize refuses calls outside the caller's scopes: the tool itself, a
// read-only token calling a tool that can change something, and the hosts
// the call names. A refusal names the missing scope.
func (g *Gateway) authorize(next Handler) Handler {
	return func(ctx context.Context, call *Call) (*mcp.CallToolResult, error) {
		s := g.principal(ctx).Scopes
		err := s.RequireTool(call.Tool.Name)
		if err == nil && call.Tool.Risk > ReadOnly {
			err = s.RequireWrite()
		}
		if err == nil {
			err = requireHosts(s, call.Args)
		}
		if err != nil {
			call.Outcome.Status = "denied"
			return nil, err
		}
		return next(ctx, call)
	}
}

// requireHosts checks the host (default "local") and any fan-out hosts a
// call names against the token's host scopes. Arguments of the wrong type
// are left to schema validation.
func requireHosts(s auth.Scopes, args map[string]any) error {
	if _, named := args["host"]; named || args["hosts"] == nil {
		h, _ := args["host"].(string)
		if h == "" {
			h = "local"
		}
		if err := s.RequireHost(h); err != nil {
			return err
		}
	}
	if hs, ok := args["hosts"].([]any); ok {
		for _, v := range hs {
			if h, ok := v.(string); ok {
				if err := s.RequireHost(h); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
