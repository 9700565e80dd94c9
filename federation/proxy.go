package federation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
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

// pathArgRE is DefaultPathArgs's pattern.
var pathArgRE = regexp.MustCompile(`^(path|paths|file|filename|directory|dir|cwd|source|destination|.+_paths?)$`)

// DefaultPathArgs reports whether an argument of a downstream tool is
// taken for a file path when [Server.PathArgs] is nil: path, paths, file,
// filename, directory, dir, cwd, source, destination, and names ending in
// _path or _paths (file_path, source_path, …). Only arguments whose schema
// is a string, a list of strings, or untyped are taken.
func DefaultPathArgs(name string) bool { return pathArgRE.MatchString(name) }

// stringish reports whether a property schema admits a string or a list
// of strings, or says nothing of its type.
func stringish(raw json.RawMessage) bool {
	var p struct {
		Type  json.RawMessage `json:"type"`
		Items *struct {
			Type json.RawMessage `json:"type"`
		} `json:"items"`
	}
	if json.Unmarshal(raw, &p) != nil {
		return false
	}
	has := func(t json.RawMessage, want string) bool {
		if t == nil {
			return true
		}
		var one string
		if json.Unmarshal(t, &one) == nil {
			return one == want
		}
		var many []string
		return json.Unmarshal(t, &many) == nil && slices.Contains(many, want)
	}
	if p.Type == nil || has(p.Type, "string") {
		return true
	}
	return has(p.Type, "array") && (p.Items == nil || has(p.Items.Type, "string"))
}

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
		if rigout.IsHostArg(n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		hosts = append(hosts, rigout.HostArg{Name: n, Resolve: rigout.HostAsGiven}) // the peer's names: judged as given
	}
	// An argument that is a file path is declared, so the token's file
	// roots apply to it: the operator's list, or the default names.
	var paths []rigout.PathArg
	for _, n := range sortedKeys(props.Properties) {
		if rigout.IsHostArg(n) {
			continue
		}
		declared := d.srv.PathArgs != nil && slices.Contains(d.srv.PathArgs, n) ||
			d.srv.PathArgs == nil && DefaultPathArgs(n) && stringish(props.Properties[n])
		if declared {
			paths = append(paths, rigout.PathArg{Name: n, Resolve: d.resolvePath})
		}
	}
	return rigout.Tool{
		Name:         d.srv.Name + Separator + t.Name,
		Title:        title,
		Description:  desc,
		InputSchema:  in,
		OutputSchema: outSchema,
		Risk:         risk,
		Hosts:        hosts,
		Paths:        paths,
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
		req.Params.Arguments = confinedArgs(call)
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

// maxPath bounds a path argument's value.
const maxPath = 4096

// resolvePath is the Resolve of a downstream tool's path argument. For a
// token without file roots the value passes as given (nothing to judge).
// For one confined to roots it returns the absolute path the downstream
// will act on: a stdio server's relative path is taken from its Dir (or
// the gateway's working directory) and its symbolic links resolved on this
// machine, as far as the path exists; an HTTP server's must be absolute
// and is cleaned lexically. "~" is refused: the downstream would expand
// it, and the gateway cannot know to what.
func (d *downstream) resolvePath(_ context.Context, call *rigout.Call, v string) (string, error) {
	if len(call.Principal().Scopes.Roots) == 0 {
		return v, nil
	}
	switch {
	case v == "":
		return "", errors.New("empty path")
	case len(v) > maxPath:
		return "", fmt.Errorf("path is %d bytes; the limit is %d", len(v), maxPath)
	case strings.HasPrefix(v, "~"):
		return "", fmt.Errorf("%q: this token is confined to file roots, so give an absolute path (the downstream would expand ~ itself)", v)
	}
	if d.srv.URL != "" {
		if !path.IsAbs(v) {
			return "", fmt.Errorf("%q is relative; this token is confined to file roots, so give an absolute path", v)
		}
		return path.Clean(v), nil
	}
	if !filepath.IsAbs(v) {
		base := d.srv.Dir
		if base == "" {
			wd, err := os.Getwd()
			if err != nil {
				return "", fmt.Errorf("%q is relative and the gateway's working directory is unknown: %v", v, err)
			}
			base = wd
		}
		v = filepath.Join(base, v)
	}
	return resolveExisting(filepath.Clean(v)), nil
}

// resolveExisting resolves the symbolic links of the longest part of p
// that exists, and appends the rest: what the downstream will reach when
// it opens p (unless a link changes in between).
func resolveExisting(p string) string {
	rest := ""
	for cur := p; ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// confinedArgs returns the arguments to send downstream: for a token
// confined to file roots, each declared path argument replaced by the
// resolved path its roots were checked against, so that what was judged is
// what the downstream touches; otherwise the call's arguments as given.
func confinedArgs(call *rigout.Call) map[string]any {
	if len(call.Principal().Scopes.Roots) == 0 || len(call.Tool.Paths) == 0 {
		return call.Args
	}
	args := maps.Clone(call.Args)
	for _, p := range call.Tool.Paths {
		switch call.Args[p.Name].(type) {
		case string:
			if v, ok := call.Path(p.Name); ok {
				args[p.Name] = v
			}
		case []any, []string:
			if l := call.PathList(p.Name); l != nil {
				args[p.Name] = slices.Clone(l)
			}
		}
	}
	return args
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
