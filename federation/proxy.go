package federation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"sync/atomic"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
)

// Limits on what one downstream tool may bring.
const (
	maxDescription = 1024
	maxSchema      = 64 << 10
)

var hostArgRE = regexp.MustCompile(`^(host|hosts|.+_host|.+_hosts)$`)

func matchGlob(pattern, name string) (bool, error) { return path.Match(pattern, name) }

func matchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if ok, _ := matchGlob(p, name); ok {
			return true
		}
	}
	return false
}

// convert turns the downstream's tool list into gateway tools, leaving
// out what the allow and deny lists remove and what cannot be served, and
// says why for each one left out.
func (d *downstream) convert(list []mcp.Tool) ([]rigout.Tool, []string) {
	var out []rigout.Tool
	var problems []string
	seen := map[string]bool{}
	over := 0
	for _, t := range list {
		if len(d.srv.Allow) > 0 && !matchAny(d.srv.Allow, t.Name) || matchAny(d.srv.Deny, t.Name) {
			continue
		}
		if seen[t.Name] {
			problems = append(problems, fmt.Sprintf("tool %q is listed twice: the first is served", t.Name))
			continue
		}
		seen[t.Name] = true
		if len(out) >= d.f.cfg.MaxTools {
			over++
			continue
		}
		rt, err := d.tool(t)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		out = append(out, rt)
	}
	if over > 0 {
		problems = append(problems, fmt.Sprintf("%d tools over the limit of %d were left out", over, d.f.cfg.MaxTools))
	}
	return out, problems
}

// tool converts one downstream tool.
func (d *downstream) tool(t mcp.Tool) (rigout.Tool, error) {
	in, err := schemaJSON(t.RawInputSchema, mcp.ToolArgumentsSchema(t.InputSchema))
	if err != nil {
		return rigout.Tool{}, fmt.Errorf("tool %q: input schema: %v", t.Name, err)
	}
	var outSchema json.RawMessage
	if t.RawOutputSchema != nil || t.OutputSchema.Type != "" {
		if outSchema, err = schemaJSON(t.RawOutputSchema, mcp.ToolArgumentsSchema(t.OutputSchema)); err != nil {
			return rigout.Tool{}, fmt.Errorf("tool %q: output schema: %v", t.Name, err)
		}
	}
	desc := t.Description
	if desc == "" {
		desc = "Tool " + t.Name + " of the downstream MCP server " + d.srv.Name + "."
	}
	if len(desc) > maxDescription {
		cut := maxDescription
		for cut > 0 && !utf8.RuneStart(desc[cut]) {
			cut--
		}
		desc = desc[:cut] + "…"
	}
	title := t.Title
	if title == "" && t.Annotations.Title != "" {
		title = t.Annotations.Title
	}
	risk := rigout.Exec
	if matchAny(d.srv.ReadOnlyTools, t.Name) {
		risk = rigout.ReadOnly
	}
	// An argument that looks like a host is declared, so the token's host
	// scopes apply to it: the safe reading of a name the chain cannot
	// interpret.
	var hosts []rigout.HostArg
	var props struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(in, &props); err != nil {
		return rigout.Tool{}, fmt.Errorf("tool %q: input schema: %v", t.Name, err)
	}
	names := make([]string, 0, len(props.Properties))
	for n := range props.Properties {
		if hostArgRE.MatchString(n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		hosts = append(hosts, rigout.HostArg{Name: n, Resolve: rigout.HostAsGiven}) // the peer's names: judged as given
	}
	return rigout.Tool{
		Name:         d.srv.Name + Separator + t.Name,
		Title:        title,
		Description:  desc,
		InputSchema:  in,
		OutputSchema: outSchema,
		Risk:         risk,
		Hosts:        hosts,
		Hints:        &mcp.ToolAnnotation{IdempotentHint: t.Annotations.IdempotentHint, OpenWorldHint: t.Annotations.OpenWorldHint},
		Handler:      d.handler(t.Name),
	}, nil
}

// oversizedFlag returns the current connection's oversized mark.
func (d *downstream) oversizedFlag() *atomic.Bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.oversized
}

// schemaJSON renders a tool's schema, raw or decoded; a missing
// "properties" becomes empty.
func schemaJSON(raw json.RawMessage, s mcp.ToolArgumentsSchema) (json.RawMessage, error) {
	b := []byte(raw)
	if raw == nil {
		if s.Properties == nil {
			s.Properties = map[string]any{}
		}
		if s.Type == "" {
			s.Type = "object"
		}
		var err error
		if b, err = json.Marshal(s); err != nil {
			return nil, err
		}
	}
	if len(b) > maxSchema {
		return nil, fmt.Errorf("%d bytes, over the limit of %d", len(b), maxSchema)
	}
	return json.RawMessage(b), nil
}

// handler proxies a call to the downstream tool named tool.
func (d *downstream) handler(tool string) rigout.Handler {
	return func(ctx context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
		call.Outcome.Route = d.kind() + " downstream " + d.srv.Name
		over := d.oversizedFlag() // read before the client: a call never sees a later connection's
		c, st := d.current()
		if c == nil {
			msg := fmt.Sprintf("%s did not run: downstream %s is %s", call.Tool.Name, d.srv.Name, st.State)
			if st.LastError != "" {
				msg += " (" + st.LastError + ")"
			}
			if !st.NextRetry.IsZero() {
				msg += "; it is restarted at " + st.NextRetry.UTC().Format("15:04:05Z")
			}
			return rigout.ErrorResult("%s. See %s.", msg, StatusTool), nil
		}
		d.mu.Lock()
		secrets := d.secrets
		d.mu.Unlock()
		if len(secrets) > 0 {
			// A downstream that prints its own credential shows it masked.
			if err := call.MaskSecrets(secrets...); err != nil {
				return rigout.ErrorResult("%s did not run: %v", call.Tool.Name, err), nil
			}
		}
		cctx, cancel := context.WithTimeout(ctx, d.srv.Timeout)
		defer cancel()
		var req mcp.CallToolRequest
		req.Params.Name = tool
		req.Params.Arguments = call.Args
		if call.WantsProgress(ctx) {
			// The downstream reports to a token of ours, which is mapped
			// back to the caller's.
			tok := "rigout-" + call.ID
			req.Params.Meta = &mcp.Meta{ProgressToken: tok}
			d.mu.Lock()
			d.progress[tok] = func(n mcp.JSONRPCNotification) {
				f := n.Params.AdditionalFields
				p, _ := f["progress"].(float64)
				total, _ := f["total"].(float64)
				msg, _ := f["message"].(string)
				_ = call.Progress(ctx, p, total, msg)
			}
			d.mu.Unlock()
			defer func() {
				d.mu.Lock()
				delete(d.progress, tok)
				d.mu.Unlock()
			}()
		}
		el := &elicitation{answers: call.Request.Params.InputResponses}
		res, err := c.CallTool(context.WithValue(cctx, elicitKey{}, el), req)
		if q := el.question(); q != nil && ctx.Err() == nil {
			return q, nil
		}
		switch {
		case err == nil && res.NeedsInput():
			return rigout.ErrorResult("%s: downstream %s asked for input it cannot have", call.Tool.Name, d.srv.Name), nil
		case err == nil:
			// The downstream's _meta (its serverInfo among it) is its own
			// connection's business, not the caller's.
			res.Meta = nil
			if capResult(res, d.srv.MaxResult, d.srv.Name) {
				call.Outcome.Truncated = true
			}
			return res, nil
		case ctx.Err() != nil:
			return rigout.ErrorResult("%s was cancelled by the caller; the downstream %s was told to stop", call.Tool.Name, d.srv.Name), nil
		case errors.Is(cctx.Err(), context.DeadlineExceeded):
			return rigout.ErrorResult("%s timed out: downstream %s did not answer within %s; it was told to stop", call.Tool.Name, d.srv.Name, d.srv.Timeout), nil
		case over.Load():
			return rigout.ErrorResult("%s failed: downstream %s sent a message over the %d-byte limit (max_message_bytes), so it was not read; the connection is restarted (see %s)", call.Tool.Name, d.srv.Name, d.srv.MaxMessage, StatusTool), nil
		case errors.Is(err, transport.ErrTransportClosed):
			d.reportLost(fmt.Errorf("the connection closed during a call of %s", tool))
			return rigout.ErrorResult("%s failed: the connection to downstream %s closed during the call (it exited, or stopped answering and was restarted), so whether it took effect is unknown; the downstream is being restarted (see %s)", call.Tool.Name, d.srv.Name, StatusTool), nil
		}
		return rigout.ErrorResult("%s failed: downstream %s: %v", call.Tool.Name, d.srv.Name, err), nil
	}
}
