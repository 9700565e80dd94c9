// Package credentials is the tool family that shows the gateway's
// credential store to the model without showing its values: the
// credentials tool lists the aliases (backend kind, who may use them),
// checks that one resolves, and — only for a token with the reveal_secrets
// scope — gets one's value, with a reason that the ledger keeps.
//
// # Overview
//
// Agents should use credentials by reference (execute_command's secrets),
// which injects a value into a command's environment and masks it from all
// output, so the model never reads it. The get action exists for the rare
// case where a person decided a value must be read: it needs the
// [rigout.RevealSecrets] capability (auth.Scopes.RevealSecrets), off by
// default and not part of FullScopes, a `reason`, and an alias whose
// "tools" include credentials. Every call is a ledger row naming the alias,
// the action and the reason, never the value.
//
// # Usage
//
//	cf, err := credentials.New(credentials.Config{Store: store})
//	gw, err := rigout.New(rigout.Config{Tools: cf.Tools(), Audit: ledger})
package credentials

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	credstore "github.com/rigout/rigout/credentials"
)

// ToolName is the tool's name, which an alias's "tools" must include for
// get.
const ToolName = "credentials"

// Config configures the family.
type Config struct {
	// Store is the credential store. Required.
	Store *credstore.Store
}

// Family is the credentials tool family. It is safe for concurrent use.
type Family struct {
	store *credstore.Store
}

// New builds the family.
func New(cfg Config) (*Family, error) {
	if cfg.Store == nil {
		return nil, errors.New("credentials: Config.Store is required")
	}
	return &Family{store: cfg.Store}, nil
}

// Tools returns the family's tools.
func (f *Family) Tools() []rigout.Tool { return []rigout.Tool{f.Credentials()} }

// Instructions is the family's part of the initialize instructions.
func (f *Family) Instructions() string {
	return "Credentials are used by reference: pass `secrets: {\"ENV_NAME\": \"alias\"}` to execute_command and the command gets the value in its environment while you see it masked. " +
		"credentials lists the aliases and checks them; it never shows a value unless the token may reveal secrets."
}

const description = "The gateway's credential aliases, never their values: list (alias, backend, hosts and tools allowed), " +
	"check (does an alias resolve), get (the value; needs the reveal_secrets scope and a reason, and is audited). " +
	"Prefer execute_command's secrets, which uses a value without showing it."

var input = json.RawMessage(`{
  "type": "object",
  "properties": {
    "action": {"type": "string", "enum": ["list", "check", "get"]},
    "alias": {"type": "string", "minLength": 1, "description": "The alias, for check and get."},
    "reason": {"type": "string", "minLength": 1, "maxLength": 500, "description": "Why the value is needed; required for get, kept in the ledger."}
  },
  "required": ["action"],
  "additionalProperties": false
}`)

// Credentials returns the credentials tool.
func (f *Family) Credentials() rigout.Tool {
	return rigout.Tool{
		Name:        ToolName,
		Description: description,
		InputSchema: input,
		Action:      "action",
		Actions:     map[string]rigout.Risk{"list": rigout.ReadOnly, "check": rigout.ReadOnly, "get": rigout.Privileged},
		Needs:       []rigout.Need{{Capability: rigout.RevealSecrets, Actions: []string{"get"}}},
		Handler:     f.handle,
	}
}

type args struct {
	Action string `json:"action"`
	Alias  string `json:"alias"`
	Reason string `json:"reason"`
}

func (f *Family) handle(ctx context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
	var a args
	if err := call.Bind(&a); err != nil {
		return nil, err
	}
	if a.Action == "list" {
		return rigout.JSONResult(map[string]any{"credentials": f.store.List()})
	}
	if a.Alias == "" {
		call.Outcome.Status = audit.StatusInvalid
		return rigout.ErrorResult("credentials %s needs `alias` (see credentials list)", a.Action), nil
	}
	call.Outcome.Detail = map[audit.DetailKey]string{audit.DetailCredential: a.Alias, audit.DetailReason: a.Reason}
	switch a.Action {
	case "check":
		_, err := f.store.Resolve(ctx, a.Alias)
		if errors.Is(err, credstore.ErrUnknownAlias) {
			call.Outcome.Status = audit.StatusInvalid
			return rigout.ErrorResult("%v", err), nil
		}
		res := map[string]any{"alias": a.Alias, "resolvable": err == nil}
		if err != nil {
			res["error"] = err.Error()
		}
		return rigout.JSONResult(res)
	case "get":
		if strings.TrimSpace(a.Reason) == "" {
			call.Outcome.Status = audit.StatusInvalid
			return rigout.ErrorResult("credentials get needs a `reason`: why the value must be read (it is kept in the ledger)"), nil
		}
		if err := f.store.AllowTool(a.Alias, ToolName); err != nil {
			var de *credstore.DeniedError
			if errors.As(err, &de) {
				call.Outcome.Status = audit.StatusDenied
				return rigout.ErrorResult("credentials get: alias %q may not be revealed: its \"tools\" do not include %s", a.Alias, ToolName), nil
			}
			call.Outcome.Status = audit.StatusInvalid
			return rigout.ErrorResult("%v", err), nil
		}
		v, err := f.store.Resolve(ctx, a.Alias)
		if err != nil {
			call.Outcome.Status = audit.StatusError
			return rigout.ErrorResult("%v", err), nil
		}
		return rigout.TextResult(v.Reveal()), nil
	}
	call.Outcome.Status = audit.StatusInvalid
	return rigout.ErrorResult("unknown action %q", a.Action), nil
}
