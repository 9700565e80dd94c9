package rigout

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/rigout/rigout/audit"
)

// guardChain makes the gateway's chain the only way a tool runs on its
// mcp-go server, whatever is registered there directly:
//
//   - the innermost mcp-go middleware ignores the handler mcp-go found and
//     runs the gateway's own for that name, so a tool added with
//     MCPServer().AddTool never runs (it is refused, and audited as a
//     refusal), and one that replaced a gateway tool runs the gateway's;
//   - tools/list (and mcp-go's own call-time filter) shows the gateway's
//     tools only, as the gateway declared them.
//
// Middleware added to the mcp-go server after New is inside this one, so
// it never runs either: embedders use Config.Middleware.
func (g *Gateway) guardChain() {
	g.srv.Use(func(server.ToolHandlerFunc) server.ToolHandlerFunc {
		return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			g.mu.RLock()
			r := g.tools[req.Params.Name]
			g.mu.RUnlock()
			if r == nil {
				g.refuseOutsideChain(ctx, req.Params.Name)
				return ErrorResult("tool %s was registered on the MCP server outside the gateway, so it does not run: "+
					"register it with rigout.Gateway.Register", ledgerName(req.Params.Name)), nil
			}
			return g.dispatch(r)(ctx, req)
		}
	})
	server.WithToolFilter(func(_ context.Context, tools []mcp.Tool) []mcp.Tool {
		g.mu.RLock()
		defer g.mu.RUnlock()
		out := make([]mcp.Tool, 0, len(tools))
		for _, t := range tools {
			if r := g.tools[t.Name]; r != nil {
				out = append(out, mcpTool(&r.tool))
			}
		}
		return out
	})(g.srv)
}

// refuseOutsideChain records a call to a tool registered outside the
// gateway as a refusal.
func (g *Gateway) refuseOutsideChain(ctx context.Context, name string) {
	if g.cfg.Audit == nil {
		return
	}
	p := g.principalOf(ctx)
	e := audit.Event{
		Type:       audit.TypeToolDenied,
		CallID:     newCallID(),
		Principal:  p.Name,
		Transport:  audit.Transport(p.Transport),
		RemoteAddr: p.RemoteAddr,
		Tool:       ledgerName(name),
		Status:     audit.StatusDenied,
		Error:      "tool registered outside the gateway's chain",
	}
	if g.admitRefusal("p\x00"+p.Name, &e) {
		_ = g.RecordEvent(ctx, e)
	}
}
