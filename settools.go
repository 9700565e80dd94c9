package rigout

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/server"
)

// SetTools makes the gateway's tools whose names begin with prefix exactly
// the valid ones among tools, while it serves: tools added at run time by a
// source that changes, such as a downstream MCP server (package federation).
// Each tool is validated as [Gateway.Register] validates it and passes the
// same chain on every call. A tool that is invalid, or whose name does not
// begin with prefix or repeats another's, is left out, and the returned
// error names every one left out; the valid ones are set all the same.
//
// A tool whose definition is unchanged keeps its registration, handler
// included; when the set changes, connected clients are sent
// notifications/tools/list_changed, and when it does not, nothing is sent.
// SetTools(prefix, nil) removes the prefix's tools.
//
// The prefix is the set's own: Register refuses a name that begins with
// it, and SetTools refuses a prefix that begins, or is the beginning of,
// another set's prefix or a registered tool's name. Tools of a set cannot
// declare [Tool.Tasks].
func (g *Gateway) SetTools(prefix string, tools []Tool) error {
	if prefix == "" {
		return errors.New("rigout: SetTools needs a non-empty prefix")
	}
	g.setMu.Lock()
	defer g.setMu.Unlock()

	var errs []error
	next := make(map[string]*registered, len(tools))
	var names []string
	for _, t := range tools {
		switch {
		case !strings.HasPrefix(t.Name, prefix):
			errs = append(errs, fmt.Errorf("rigout: tool %q does not begin with %q", t.Name, prefix))
			continue
		case next[t.Name] != nil:
			errs = append(errs, fmt.Errorf("%w: %s appears twice", ErrDuplicateTool, t.Name))
			continue
		case t.Tasks:
			errs = append(errs, fmt.Errorf("rigout: tool %s: tools set at run time cannot declare Tasks", t.Name))
			continue
		}
		r, err := g.prepare(t)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		r.set = prefix
		next[t.Name] = r
		names = append(names, t.Name)
	}

	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return ErrClosed
	}
	for p := range g.sets {
		if p != prefix && (strings.HasPrefix(p, prefix) || strings.HasPrefix(prefix, p)) {
			g.mu.Unlock()
			return fmt.Errorf("rigout: prefix %q overlaps the tool set %q", prefix, p)
		}
	}
	for name, r := range g.tools {
		if r.set == "" && strings.HasPrefix(name, prefix) {
			g.mu.Unlock()
			return fmt.Errorf("rigout: prefix %q overlaps the registered tool %s", prefix, name)
		}
	}
	if g.sets == nil {
		g.sets = map[string]bool{}
	}
	g.sets[prefix] = true
	var removed []string
	for name, r := range g.tools {
		if r.set == prefix && next[name] == nil {
			removed = append(removed, name)
			delete(g.tools, name)
		}
	}
	var added []*registered
	for _, name := range names {
		r := next[name]
		if old := g.tools[name]; old != nil && sameDefinition(old, r) {
			continue
		}
		g.tools[name] = r
		added = append(added, r)
	}
	g.order = slices.DeleteFunc(g.order, func(n string) bool { return g.tools[n] == nil })
	for _, r := range added {
		if !slices.Contains(g.order, r.tool.Name) {
			g.order = append(g.order, r.tool.Name)
		}
	}
	g.mu.Unlock()

	if len(removed) > 0 {
		slices.Sort(removed)
		g.srv.DeleteTools(removed...)
	}
	if len(added) > 0 {
		errs = append(errs, g.addToServer(added)...)
	}
	return errors.Join(errs...)
}

// addToServer hands tools to mcp-go in one batch, which announces them
// once. mcp-go panics on a definition it refuses (a bad x-mcp-header
// annotation); then each is added alone and the refused ones are dropped
// from the registry.
func (g *Gateway) addToServer(rs []*registered) (errs []error) {
	entries := make([]server.ServerTool, len(rs))
	for i, r := range rs {
		entries[i] = server.ServerTool{Tool: mcpTool(&r.tool), Handler: g.dispatch(r)}
	}
	if addTools(g.srv, entries...) == nil {
		return nil
	}
	for i, e := range entries {
		if err := addTools(g.srv, e); err != nil {
			errs = append(errs, fmt.Errorf("rigout: tool %s: %v", e.Tool.Name, err))
			g.mu.Lock()
			if g.tools[e.Tool.Name] == rs[i] {
				delete(g.tools, e.Tool.Name)
				g.order = slices.DeleteFunc(g.order, func(n string) bool { return n == e.Tool.Name })
			}
			g.mu.Unlock()
		}
	}
	return errs
}

func addTools(srv *server.MCPServer, entries ...server.ServerTool) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("refused by the MCP server: %v", p)
		}
	}()
	srv.AddTools(entries...)
	return nil
}

// sameDefinition reports whether two registrations describe the same tool
// to clients and to the chain.
func sameDefinition(a, b *registered) bool {
	if a.tool.Risk != b.tool.Risk || a.tool.DefaultHost != b.tool.DefaultHost ||
		!slices.EqualFunc(a.tool.Hosts, b.tool.Hosts, func(x, y HostArg) bool { return x.Name == y.Name }) {
		return false
	}
	ja, err1 := json.Marshal(mcpTool(&a.tool))
	jb, err2 := json.Marshal(mcpTool(&b.tool))
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}
