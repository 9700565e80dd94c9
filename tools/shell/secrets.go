package shell

import (
	"context"
	"errors"
	"io"
	"sort"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/credentials"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/redact"
)

// secretsProperty is the input property execute_command has when the
// family has a credential store (Config.Credentials).
const secretsProperty = `"secrets": {"type": "object", "additionalProperties": {"type": "string", "minLength": 1}, "description": "Credentials by reference: {\"ENV_NAME\": \"alias\"} (aliases: credentials list). The command gets each value in its environment; you never see it: every output is masked of it."},
    `

// secretPlaceholder stands for a credential's value where the command
// policy judges the environment: it judges the names, never a value.
const secretPlaceholder = "[credential]"

// injectSecrets resolves refs (ENV_NAME → alias) for the call and sets
// them on cmd: the values in cmd.Secrets, a scrubber of them on every
// output stream, and the call's mask. env is the call's environment
// argument, which may not set a name refs sets. It returns an error result
// when the call must not run, and adds the names to check's environment
// (with a placeholder value) for the policy.
func (f *Family) injectSecrets(ctx context.Context, call *rigout.Call, refs, env map[string]string, cmd *exec.Command, checkEnv *map[string]string) *mcp.CallToolResult {
	if len(refs) == 0 {
		return nil
	}
	store := f.cfg.Credentials
	if store == nil {
		call.Outcome.Status = audit.StatusInvalid
		return rigout.ErrorResult("this gateway has no credential store: `secrets` cannot be used (configure \"credentials\")")
	}
	names := make([]string, 0, len(refs))
	for n := range refs {
		names = append(names, n)
	}
	sort.Strings(names)
	var used []string
	values := make(map[string]string, len(refs))
	for _, n := range names {
		alias := refs[n]
		if err := (&exec.Command{Argv: []string{"x"}, Env: map[string]string{n: ""}}).Validate(); err != nil {
			call.Outcome.Status = audit.StatusInvalid
			return rigout.ErrorResult("secrets: %q is not a valid environment variable name", n)
		}
		if _, clash := env[n]; clash {
			call.Outcome.Status = audit.StatusInvalid
			return rigout.ErrorResult("secrets sets %s from alias %q, so environment may not set it too", n, alias)
		}
		for _, h := range call.Hosts() {
			if err := store.Allow(alias, h, call.Tool.Name); err != nil {
				var de *credentials.DeniedError
				if errors.As(err, &de) {
					call.Outcome.Status = audit.StatusDenied
				} else {
					call.Outcome.Status = audit.StatusInvalid
				}
				return rigout.ErrorResult("secrets %s: %v", n, err)
			}
		}
		v, err := store.Resolve(ctx, alias)
		if err != nil {
			call.Outcome.Status = audit.StatusError
			return rigout.ErrorResult("secrets %s: %v", n, err)
		}
		if len(v.Reveal()) < redact.MinSecretLen {
			call.Outcome.Status = audit.StatusError
			return rigout.ErrorResult("secrets %s: the value of alias %q is shorter than %d bytes, too short to be masked in output, so it is not used", n, alias, redact.MinSecretLen)
		}
		values[n] = v.Reveal()
		used = append(used, alias+" as "+n)
	}
	vals := make([]string, 0, len(values))
	for _, v := range values {
		vals = append(vals, v)
	}
	if err := call.MaskSecrets(vals...); err != nil {
		call.Outcome.Status = audit.StatusError
		return rigout.ErrorResult("secrets: %v", err)
	}
	set, err := redact.New(vals...)
	if err != nil {
		call.Outcome.Status = audit.StatusError
		return rigout.ErrorResult("secrets: %v", err)
	}
	cmd.Secrets = values
	cmd.Scrub = func(w io.Writer) io.WriteCloser { return set.Scrubber(w) }
	if call.Outcome.Detail == nil {
		call.Outcome.Detail = map[string]string{}
	}
	call.Outcome.Detail["credentials"] = strings.Join(used, ", ")
	ce := make(map[string]string, len(env)+len(names))
	for k, v := range env {
		ce[k] = v
	}
	for _, n := range names {
		ce[n] = secretPlaceholder
	}
	*checkEnv = ce
	return nil
}
