package exec

import (
	"fmt"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// RemoteCommandLine returns the command line for cmd that rigout sends in
// an SSH exec request (SSH.Run prefixes it with a builtin printf that
// reports the process id on stderr, removed before capture, so that a
// timeout can end the whole process group). The remote login shell (sshd runs it with -c) reads it,
// so every piece of data in it is quoted with mvdan.cc/sh's syntax.Quote:
// POSIX single quotes, or bash's $'…' for a string holding a control
// character such as a newline (bash, zsh, ksh and busybox ash understand
// it; dash does not). The line is:
//
//	[cd -- DIR && ][export K=V… && ]exec [sudo -n -- ]ARGV…
//
// A DIR of "~" or "~/…" starts from the remote $HOME; a relative DIR from
// the login directory.
// where ARGV is cmd.Argv quoted word by word, or for a shell command
// `SHELL -c COMMAND`. SHELL is shell when it is not empty; otherwise bash
// when the host has it, else sh, chosen on the host without running
// anything (`command -v` is built in). exec makes the command the process
// sshd started, so that a signal reaches it. Env names are validated; a
// NUL byte anywhere is an error.
func RemoteCommandLine(cmd Command, shell string) (string, error) {
	if err := cmd.Validate(); err != nil {
		return "", err
	}
	var b strings.Builder
	if len(cmd.Secrets) > 0 {
		// The values come on standard input (see SecretsLine); read and
		// export them with built-ins only, so that no value is in an argv.
		b.WriteString(secretsPrefix)
	}
	q := func(s string) error {
		v, err := QuotePOSIX(s)
		if err != nil {
			return fmt.Errorf("exec: cannot quote %q for the remote shell: %w", s, err)
		}
		b.WriteString(v)
		return nil
	}
	switch dir := cmd.Dir; {
	case dir == "":
	case dir == "~":
		b.WriteString(`cd -- "$HOME" && `)
	case strings.HasPrefix(dir, "~/"):
		b.WriteString(`cd -- "$HOME"/`)
		if err := q(dir[2:]); err != nil {
			return "", err
		}
		b.WriteString(" && ")
	default:
		b.WriteString("cd -- ")
		if err := q(dir); err != nil {
			return "", err
		}
		b.WriteString(" && ")
	}
	if len(cmd.Env) > 0 {
		// A name in Secrets takes the Secrets value (exported earlier).
		keys := make([]string, 0, len(cmd.Env))
		for k := range cmd.Env {
			if _, secret := cmd.Secrets[k]; !secret {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		b.WriteString("export")
		for _, k := range keys {
			b.WriteString(" " + k + "=")
			if err := q(cmd.Env[k]); err != nil {
				return "", err
			}
		}
		b.WriteString(" && ")
	}
	argv := cmd.Argv
	pickShell := false
	if cmd.Shell != "" {
		pickShell = shell == ""
		argv = []string{shell, "-c", cmd.Shell}
		if pickShell {
			b.WriteString("{ command -v bash >/dev/null 2>&1 && rigout_sh=bash || rigout_sh=sh; } && ")
		}
	}
	b.WriteString("exec")
	if cmd.Sudo {
		b.WriteString(" sudo -n --")
	}
	for i, a := range argv {
		b.WriteByte(' ')
		if i == 0 && pickShell {
			b.WriteString(`"$rigout_sh"`)
			continue
		}
		if err := q(a); err != nil {
			return "", err
		}
	}
	return b.String(), nil
}

// SecretsLine is the line of standard input that carries secrets: one
// export of every variable, each value single-quoted, a quote written
// '\” and a newline '"$rigout_nl"', so that the line holds no newline
// before its end.
func SecretsLine(secrets map[string]string) string {
	keys := make([]string, 0, len(secrets))
	for k := range secrets {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteString("export")
	for _, k := range keys {
		v := strings.ReplaceAll(secrets[k], "'", `'\''`)
		v = strings.ReplaceAll(v, "\n", `'"$rigout_nl"'`)
		b.WriteString(" " + k + "='" + v + "'")
	}
	b.WriteString("\n")
	return b.String()
}

// QuotePOSIX quotes s for the remote login shell: POSIX single quotes when
// that can hold it, else bash's $'…' (for control characters such as a
// newline, which bash, zsh, ksh and busybox ash understand).
func QuotePOSIX(s string) (string, error) {
	q, err := syntax.Quote(s, syntax.LangPOSIX)
	if err == nil {
		return q, nil
	}
	return syntax.Quote(s, syntax.LangBash)
}

// secretsPrefix is what a command line with Command.Secrets starts with:
// the remote shell reads one line from standard input and evaluates it.
// read, eval, export and unset are built-ins: the values never appear in
// a process's argv. rigout_nl holds the newline that values with one are
// rebuilt with (see SecretsLine).
const secretsPrefix = "rigout_nl='\n' && IFS= read -r rigout_env && eval \"$rigout_env\" && unset rigout_env rigout_nl && "
