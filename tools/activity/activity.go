// Package activity is the tool family that shows what the gateway has been
// doing: get_server_activity returns the gateway's status and its most
// recent audit events.
//
// # Overview
//
// The family reads the ledger through audit.Querier, a field of its
// [Config]: a gateway whose ledger cannot be queried simply does not
// build this family, a choice made at compile time rather than found out
// at call time. A token without full scopes sees only its own events.
//
// # Usage
//
//	act, err := activity.New(activity.Config{Ledger: ledger})
//	if err != nil {
//		return err
//	}
//	gw, err := rigout.New(rigout.Config{Tools: act.Tools(), Audit: ledger})
package activity

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/textsafe"
)

// Config configures the family.
type Config struct {
	// Ledger is where recent events are read from. Required.
	Ledger audit.Querier
}

// Family is the activity tool family. It is safe for concurrent use.
type Family struct {
	ledger audit.Querier
}

// New builds the family.
func New(cfg Config) (*Family, error) {
	if cfg.Ledger == nil {
		return nil, errors.New("activity: Config.Ledger is required")
	}
	return &Family{ledger: cfg.Ledger}, nil
}

// Tools returns the family's tools.
func (f *Family) Tools() []rigout.Tool { return []rigout.Tool{f.ServerActivity()} }

const activityDescription = "Recent audit events (who ran what, where, and how it ended) and the gateway's status, as JSON."

var activityInput = json.RawMessage(`{
  "type": "object",
  "properties": {
    "lines": {"type": "integer", "minimum": 1, "maximum": 200, "description": "1-200 recent events. Default 50."}
  },
  "additionalProperties": false
}`)

// ServerActivity returns the get_server_activity tool.
func (f *Family) ServerActivity() rigout.Tool {
	return rigout.Tool{
		Name:        "get_server_activity",
		Description: activityDescription,
		InputSchema: activityInput,
		Risk:        rigout.ReadOnly,
		Handler:     f.serverActivity,
	}
}

// event is one ledger row as get_server_activity shows it.
type event struct {
	Seq       int64  `json:"seq"`
	Time      string `json:"time"`
	Type      string `json:"type"`
	Phase     string `json:"phase,omitempty"`
	Principal string `json:"principal,omitempty"`
	Tool      string `json:"tool,omitempty"`
	Host      string `json:"host,omitempty"`
	// Ran is what the call ran or touched, as the ledger keeps it
	// (audit.Event.Ran): the command line, or the action and path.
	Ran      string `json:"ran,omitempty"`
	Route    string `json:"route,omitempty"`
	Status   string `json:"status,omitempty"`
	Rule     string `json:"rule,omitempty"`
	Bypassed bool   `json:"bypassed,omitempty"`
	ExitCode *int   `json:"exit_code,omitempty"`
	Signal   string `json:"signal,omitempty"`
	MS       int64  `json:"duration_ms,omitempty"`
	Error    string `json:"error,omitempty"`
}

// status is the gateway's side of the answer.
type status struct {
	Name    string        `json:"name"`
	Version string        `json:"version"`
	PID     int           `json:"pid"`
	Started string        `json:"started"`
	UptimeS int64         `json:"uptime_s"`
	Tools   int           `json:"tools"`
	Health  rigout.Health `json:"health"`
}

func (f *Family) serverActivity(ctx context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
	var a struct {
		Lines int `json:"lines"`
	}
	if err := call.Bind(&a); err != nil {
		return nil, err
	}
	if a.Lines == 0 {
		a.Lines = 50
	}
	gw := call.Gateway()
	cfg := gw.Config()
	started := gw.Started()
	out := struct {
		Server status  `json:"server"`
		Scope  string  `json:"scope,omitempty"`
		Events []event `json:"events"`
	}{
		Server: status{
			Name: cfg.Name, Version: cfg.Version, PID: os.Getpid(),
			Started: started.UTC().Format(time.RFC3339),
			UptimeS: int64(cfg.Now().Sub(started).Seconds()),
			Tools:   len(gw.Tools()),
			Health:  gw.Health(),
		},
		Events: []event{},
	}
	// A token without full scopes sees its own activity only.
	filter := audit.Filter{Limit: a.Lines, Newest: true}
	if p := call.Principal(); !p.Scopes.IsFull() {
		filter.Principal = p.Name
		out.Scope = "events of " + p.Name + " only"
	}
	evs, err := f.ledger.Query(ctx, filter)
	if err != nil {
		return rigout.ErrorResult("reading the audit ledger: %v", err), nil
	}
	for _, e := range evs {
		out.Events = append(out.Events, event{
			Seq: e.Seq, Time: e.Time.UTC().Format(time.RFC3339Nano), Type: string(e.Type), Phase: string(e.Phase),
			Principal: e.Principal, Tool: e.Tool, Host: e.Host, Route: e.Route, Status: string(e.Status),
			Rule: e.Rule, Bypassed: e.Bypassed, ExitCode: e.ExitCode, Signal: e.Signal,
			MS: e.Duration.Milliseconds(), Error: e.Error, Ran: textsafe.Block(e.Ran(), 500),
		})
	}
	return rigout.JSONResult(out)
}
