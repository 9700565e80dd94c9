package credentials

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/rigout/rigout/redact"
)

// Placeholder stands for a credential's value where a command policy
// judges an environment: the policy sees the names a call sets, never a
// value.
const Placeholder = "[credential]"

// UseRequest is one tool call's use of credentials by reference: its
// "secrets" argument, {"ENV_NAME": "alias"}.
type UseRequest struct {
	// Refs maps environment variable names to aliases.
	Refs map[string]string
	// Env is the call's own environment argument, which may not set a
	// name Refs sets.
	Env map[string]string
	// Hosts are every host the call reaches: each alias must be allowed
	// on each of them.
	Hosts []string
	// Tool is the tool's name, which each alias must allow.
	Tool string
}

// Use is what [Store.Use] resolved: values for a child's environment.
// It prints, logs and marshals without them.
type Use struct {
	values map[string]string
	names  []string // sorted
	used   []string // "alias as NAME"
}

// UseErrorKind says what kind of refusal a [UseError] is.
type UseErrorKind int

// The kinds of UseError.
const (
	// UseInvalid: a bad name, a clash with Env, or an unknown alias.
	UseInvalid UseErrorKind = iota + 1
	// UseDenied: an alias may not be used on a host or by the tool
	// (Err is a *DeniedError).
	UseDenied
	// UseFailed: a value could not be fetched, or is too short to mask.
	UseFailed
)

// UseError says why [Store.Use] refused a request. Its message names the
// variable and the alias, never a value.
type UseError struct {
	Kind  UseErrorKind
	Name  string // the environment variable
	Alias string
	Err   error // the cause, if any
	msg   string
}

func (e *UseError) Error() string { return e.msg }

func (e *UseError) Unwrap() error { return e.Err }

// Use checks and resolves r: every name must be a portable shell
// identifier that r.Env does not set, every alias must be allowed on
// every host of r.Hosts and by r.Tool ([Store.Allow]), and every value at
// least [redact.MinSecretLen] bytes long, so that it can be masked in
// output. It returns a nil Use for a request without Refs, and a
// *UseError when the call must not run.
//
// The caller hands [Use.Env] to the child (exec.Command.Secrets), masks
// [Use.Values] in every output stream and in the call's result, and
// records [Use.Aliases] in its ledger row.
func (s *Store) Use(ctx context.Context, r UseRequest) (*Use, error) {
	if len(r.Refs) == 0 {
		return nil, nil
	}
	u := &Use{values: make(map[string]string, len(r.Refs))}
	for n := range r.Refs {
		u.names = append(u.names, n)
	}
	sort.Strings(u.names)
	for _, n := range u.names {
		alias := r.Refs[n]
		if !validEnvName(n) {
			return nil, &UseError{Kind: UseInvalid, Name: n, Alias: alias,
				msg: fmt.Sprintf("secrets: %q is not a valid environment variable name", n)}
		}
		if _, clash := r.Env[n]; clash {
			return nil, &UseError{Kind: UseInvalid, Name: n, Alias: alias,
				msg: fmt.Sprintf("secrets sets %s from alias %q, so environment may not set it too", n, alias)}
		}
		if s == nil {
			return nil, &UseError{Kind: UseInvalid, Name: n, Alias: alias,
				msg: "this gateway has no credential store: `secrets` cannot be used (configure \"credentials\")"}
		}
		hosts := r.Hosts
		if len(hosts) == 0 {
			if err := s.AllowTool(alias, r.Tool); err != nil {
				return nil, useRefusal(n, alias, err)
			}
		}
		for _, h := range hosts {
			if err := s.Allow(alias, h, r.Tool); err != nil {
				return nil, useRefusal(n, alias, err)
			}
		}
		v, err := s.Resolve(ctx, alias)
		if err != nil {
			return nil, &UseError{Kind: UseFailed, Name: n, Alias: alias, Err: err, msg: fmt.Sprintf("secrets %s: %v", n, err)}
		}
		if len(v.Reveal()) < redact.MinSecretLen {
			return nil, &UseError{Kind: UseFailed, Name: n, Alias: alias, Err: redact.ErrShortSecret,
				msg: fmt.Sprintf("secrets %s: the value of alias %q is shorter than %d bytes, too short to be masked in output, so it is not used", n, alias, redact.MinSecretLen)}
		}
		u.values[n] = v.Reveal()
		u.used = append(u.used, alias+" as "+n)
	}
	return u, nil
}

func useRefusal(name, alias string, err error) *UseError {
	kind := UseInvalid
	var de *DeniedError
	if errors.As(err, &de) {
		kind = UseDenied
	}
	return &UseError{Kind: kind, Name: name, Alias: alias, Err: err, msg: fmt.Sprintf("secrets %s: %v", name, err)}
}

// Env returns a copy of the variables to set: name → value.
func (u *Use) Env() map[string]string {
	if u == nil {
		return nil
	}
	out := make(map[string]string, len(u.values))
	for k, v := range u.values {
		out[k] = v
	}
	return out
}

// Values returns the values, to mask (sorted by variable name).
func (u *Use) Values() []string {
	if u == nil {
		return nil
	}
	out := make([]string, 0, len(u.names))
	for _, n := range u.names {
		out = append(out, u.values[n])
	}
	return out
}

// Names returns the variable names, sorted.
func (u *Use) Names() []string {
	if u == nil {
		return nil
	}
	return append([]string(nil), u.names...)
}

// Aliases describes the use for a ledger row: "alias as NAME, …", no
// value.
func (u *Use) Aliases() string {
	if u == nil {
		return ""
	}
	return strings.Join(u.used, ", ")
}

// PolicyEnv returns env with every name of u set to [Placeholder]: the
// environment a command policy judges.
func (u *Use) PolicyEnv(env map[string]string) map[string]string {
	if u == nil {
		return env
	}
	out := make(map[string]string, len(env)+len(u.names))
	for k, v := range env {
		out[k] = v
	}
	for _, n := range u.names {
		out[n] = Placeholder
	}
	return out
}

// Mask returns a redact.Set of the values, whose Scrubber masks them (and
// their encodings) in a stream.
func (u *Use) Mask() (*redact.Set, error) {
	return redact.New(u.Values()...)
}

// String describes u without its values.
func (u *Use) String() string {
	if u == nil {
		return "credentials.Use(none)"
	}
	return "credentials.Use(" + u.Aliases() + ")"
}

// GoString is String, so that %#v shows no value either.
func (u *Use) GoString() string { return u.String() }

// MarshalJSON describes u without its values.
func (u *Use) MarshalJSON() ([]byte, error) {
	return []byte(fmt.Sprintf("%q", u.String())), nil
}

// validEnvName reports whether s is a portable shell identifier,
// [A-Za-z_][A-Za-z0-9_]*, as exec requires of an environment name.
func validEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
