// Package credentials is rigout's credential store: named aliases for
// secrets kept elsewhere — an environment variable, an owner-only file, or
// a vault reached through its command-line client (1Password op, pass,
// HashiCorp Vault, Bitwarden bw) — and who may use each.
//
// # Overview
//
// A [Store] is built from a map of alias names to [Spec]s, the form the
// configuration file gives ("credentials": {"github": {"pass":
// "ci/github-token", "hosts": ["build-*"], "tools": ["execute_command"]}}).
// [Store.Resolve] fetches a value when it is used, every time: nothing is
// cached unless [Config].CacheTTL says so. A value is an [auth.Secret],
// which prints, logs and marshals as "[REDACTED]"; errors never hold one
// (a vault client's standard output, which holds the value, is never put
// in an error; its standard error is, one line of it, masked).
//
// Vault clients run as an argument vector, never through a shell, with a
// timeout ([Config].Timeout), standard input /dev/null and no terminal, so
// a client that wants to prompt fails instead of hanging.
//
// [Store.Allow] says whether an alias may be used on a host by a tool
// (globs; an alias with no hosts may be used only on "local", one with no
// tools only by execute_command). [Store.List] describes the aliases
// without their values.
//
// # Usage
//
//	store, err := credentials.New(credentials.Config{Aliases: specs})
//	if err := store.Allow("github", "build-1", "execute_command"); err != nil {
//		return err // refused: say so to the caller
//	}
//	v, err := store.Resolve(ctx, "github")
//	cmd.Secrets = map[string]string{"GITHUB_TOKEN": v.Reveal()}
package credentials
