package rigout

import (
	"context"
	"encoding/json"
	"os"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout/audit"
)

const activityDescription = "Recent audit events (who ran what, where, and how it ended) and the gateway's status, as JSON."

var activityInput = json.RawMessage(`{
  "type": "object",
  "properties": {
    "lines": {"type": "integer", "minimum": 1, "maximum": 200, "description": "How many recent events. Default 50."}
  },
  "additionalProperties": false
}`)

func (g *Gateway) activityTool() Tool {
	return Tool{
		Name:        "get_server_activity",
		Description: activityDescription,
		InputSchema: activityInput,
		Risk:        ReadOnly,
		Handler:     g.serverActivity,
	}
}

// activityEvent is one ledger row as get_server_activity shows it.
type activityEvent struct {
	Seq       int64  `json:"seq"`
	Time      string `json:"time"`
	Type      string `json:"type"`
	Phase     string `json:"phase,omitempty"`
	Principal string `json:"principal,omitempty"`
	Tool      string `json:"tool,omitempty"`
	Host      string `json:"host,omitempty"`
	Route     string `json:"route,omitempty"`
	Status    string `json:"status,omitempty"`
	Rule      string `json:"rule,omitempty"`
	Bypassed  bool   `json:"bypassed,omitempty"`
	ExitCode  *int   `json:"exit_code,omitempty"`
	Signal    string `json:"signal,omitempty"`
	MS        int64  `json:"duration_ms,omitempty"`
	Error     string `json:"error,omitempty"`
}

func (g *Gateway) serverActivity(ctx context.Context, call *Call) (*mcp.CallToolResult, error) {
	var a struct {
		Lines int `json:"lines"`
	}
	if err := call.Bind(&a); err != nil {
		return nil, err
	}
	if a.Lines == 0 {
		a.Lines = 50
	}
	now := g.cfg.Now()
	status := map[string]any{
		"name":     g.cfg.Name,
		"version":  g.cfg.Version,
		"pid":      os.Getpid(),
		"started":  g.started.UTC().Format(time.RFC3339),
		"uptime_s": int64(now.Sub(g.started).Seconds()),
		"tools":    len(g.Tools()),
	}
	for k, v := range g.Health() {
		status[k] = v
	}
	out := map[string]any{"server": status, "events": []activityEvent{}}

	q, ok := g.cfg.Audit.(auditQuerier)
	if !ok {
		out["note"] = "no audit ledger is configured; there is no activity to show"
	} else {
		// A token without full scopes sees its own activity only.
		f := audit.Filter{Limit: a.Lines, Newest: true}
		if p := g.principal(ctx); !p.Scopes.IsFull() {
			f.Principal = p.Name
			out["scope"] = "events of " + p.Name + " only"
		}
		evs, err := q.Query(ctx, f)
		if err != nil {
			return ErrorResult("reading the audit ledger: %v", err), nil
		}
		list := make([]activityEvent, 0, len(evs))
		for _, e := range evs {
			list = append(list, activityEvent{
				Seq: e.Seq, Time: e.Time.UTC().Format(time.RFC3339Nano), Type: e.Type, Phase: e.Phase,
				Principal: e.Principal, Tool: e.Tool, Host: e.Host, Route: e.Route, Status: string(e.Status),
				Rule: e.Rule, Bypassed: e.Bypassed, ExitCode: e.ExitCode, Signal: e.Signal,
				MS: e.Duration.Milliseconds(), Error: e.Error,
			})
		}
		out["events"] = list
	}
	b, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		return nil, err
	}
	return TextResult(string(b)), nil
}
