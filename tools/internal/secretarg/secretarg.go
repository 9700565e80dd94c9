// Package secretarg is the `secrets` argument the tool families share:
// credentials by reference, {"ENV_NAME": "alias"}, resolved through a
// credentials.Store for one call (see credentials.Store.Use) and masked
// in the call's result and ledger row.
package secretarg

import (
	"context"
	"errors"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/credentials"
	"github.com/rigout/rigout/redact"
)

// Property is the input schema property of a tool that takes `secrets`,
// with the comma and newline that follow it in a properties object. A
// family adds it only when it has a credential store, which keeps the
// default tools/list small.
const Property = `"secrets": {"type": "object", "additionalProperties": {"type": "string", "minLength": 1}, "description": "Credentials by reference: {\"ENV_NAME\": \"alias\"} (aliases: credentials list). The command gets each value in its environment; you never see it: every output is masked of it."},
    `

// Resolved is one call's credentials: what to give the child and what
// masks its output.
type Resolved struct {
	// Use holds the values (Use.Env for the child).
	Use *credentials.Use
	// Mask is a set of the values, for redact.Set.Scrubber on every
	// output stream.
	Mask *redact.Set
}

// Resolve resolves refs (the call's `secrets`) for call, on every host
// call reaches (call.Hosts(), or none for a tool that names no host) by
// call's tool, with env the call's environment argument. It returns a
// nil Resolved and a nil result when refs is empty. When the call must
// not run it returns the error result and sets the outcome's status:
// invalid (a bad name, a clash, an unknown alias, no store), denied (the
// alias's hosts or tools do not allow it) or error (not resolved, too
// short). Otherwise the values are added to the call's mask
// (rigout.Call.MaskSecrets) and the outcome's "credentials" detail names
// the aliases, never a value.
func Resolve(ctx context.Context, call *rigout.Call, store *credentials.Store, refs, env map[string]string) (*Resolved, *mcp.CallToolResult) {
	if len(refs) == 0 {
		return nil, nil
	}
	if store == nil {
		call.Outcome.Status = audit.StatusInvalid
		return nil, rigout.ErrorResult("this gateway has no credential store: `secrets` cannot be used (configure \"credentials\")")
	}
	u, err := store.Use(ctx, credentials.UseRequest{Refs: refs, Env: env, Hosts: call.Hosts(), Tool: call.Tool.Name})
	if err != nil {
		call.Outcome.Status = audit.StatusError
		var ue *credentials.UseError
		if errors.As(err, &ue) {
			switch ue.Kind {
			case credentials.UseInvalid:
				call.Outcome.Status = audit.StatusInvalid
			case credentials.UseDenied:
				call.Outcome.Status = audit.StatusDenied
			}
		}
		return nil, rigout.ErrorResult("%v", err)
	}
	if err := call.MaskSecrets(u.Values()...); err != nil {
		call.Outcome.Status = audit.StatusError
		return nil, rigout.ErrorResult("secrets: %v", err)
	}
	set, err := u.Mask()
	if err != nil {
		call.Outcome.Status = audit.StatusError
		return nil, rigout.ErrorResult("secrets: %v", err)
	}
	if call.Outcome.Detail == nil {
		call.Outcome.Detail = map[audit.DetailKey]string{}
	}
	call.Outcome.Detail[audit.DetailCredentials] = u.Aliases()
	return &Resolved{Use: u, Mask: set}, nil
}
