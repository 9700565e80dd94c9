package exec

import (
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Shell is the shell an SSH server runs commands with: what the command
// line rigout sends is written for, and which policy judges it.
type Shell string

// The shells. The zero value is ShellAuto.
const (
	// ShellAuto detects the shell on first use and remembers it for the
	// host (see SSH.Shell).
	ShellAuto Shell = "auto"
	// ShellPOSIX is a POSIX shell (sh, bash, dash, zsh): every Unix
	// server, and a Windows one whose DefaultShell is bash.
	ShellPOSIX Shell = "posix"
	// ShellCmd is cmd.exe, Windows OpenSSH's default shell.
	ShellCmd Shell = "cmd"
	// ShellPowerShell is Windows PowerShell or pwsh as Windows OpenSSH's
	// DefaultShell.
	ShellPowerShell Shell = "powershell"
)

// ErrUnknownShell is returned by Shell.Validate for a name it does not
// know.
var ErrUnknownShell = errors.New("exec: unknown shell")

// ErrShellUnsupported means the host's shell cannot run the command as
// asked without weakening a guarantee: secrets on cmd.exe (only a command
// line could carry them), sudo on Windows, a value cmd.exe would expand.
var ErrShellUnsupported = errors.New("exec: not possible with the host's shell")

// Validate reports whether s is "", auto, posix, cmd or powershell.
func (s Shell) Validate() error {
	switch s {
	case "", ShellAuto, ShellPOSIX, ShellCmd, ShellPowerShell:
		return nil
	}
	return fmt.Errorf("%w %q (want auto, posix, cmd or powershell)", ErrUnknownShell, string(s))
}

// Windows reports whether s is cmd.exe or PowerShell.
func (s Shell) Windows() bool { return s == ShellCmd || s == ShellPowerShell }

// ShellProbe is the one command SSH.Shell sends to a Windows server to
// tell the shells apart: cmd.exe
// expands %OS% (Windows_NT on every Windows) and leaves $? alone;
// PowerShell expands $? (True) in a bare word and leaves %OS% alone; a
// POSIX shell expands $? (0) and leaves %OS% alone.
const ShellProbe = "echo rigout-shell:%OS%:$?"

// CommandLineFor returns the command line for cmd that rigout sends to a
// host whose shell is sh: RemoteCommandLine(cmd, posixShell) for a POSIX
// shell, CmdCommandLine or PowerShellCommandLine for Windows.
func CommandLineFor(cmd Command, sh Shell, posixShell string) (string, error) {
	switch sh {
	case ShellCmd:
		return CmdCommandLine(cmd)
	case ShellPowerShell:
		return PowerShellCommandLine(cmd)
	}
	return RemoteCommandLine(cmd, posixShell)
}

// CmdCommandLine returns the command line for cmd on a host whose SSH
// server runs commands with cmd.exe (Win32-OpenSSH hands it to
// cmd.exe /c as it is):
//
//	[cd /d "DIR" || exit 1 & ][set "K=V" & …]COMMAND
//
// A failed cd ends cmd.exe with status 1 before anything else runs. DIR
// and values are double-quoted, which makes & | < > ( ) ^ literal; a DIR
// or value holding a double quote, %, ! or a line break is refused with
// ErrShellUnsupported, since cmd.exe expands % inside quotes and a quote
// would end them. A DIR of "~" or "~/…" starts from %USERPROFILE%.
// COMMAND is cmd.Shell as given (cmd.exe syntax), or cmd.Argv quoted by
// QuoteCmdArg. Secrets are refused (ErrShellUnsupported): cmd.exe has no
// way to read a value from standard input without consuming the command's
// own input, and a command line is visible to every process on the host.
// So is Sudo.
func CmdCommandLine(cmd Command) (string, error) {
	if err := cmd.Validate(); err != nil {
		return "", err
	}
	if len(cmd.Secrets) > 0 {
		return "", fmt.Errorf("%w: secrets on a cmd.exe host (cmd.exe can take a value only from its command line, which every process on the host can read, or from standard input, which set /p may consume past the value); use a PowerShell host or pass the secret another way", ErrShellUnsupported)
	}
	if cmd.Sudo {
		return "", fmt.Errorf("%w: sudo on a Windows host", ErrShellUnsupported)
	}
	var b strings.Builder
	if cmd.Dir != "" {
		if _, err := cmdQuoted("the working directory", cmd.Dir); err != nil {
			return "", err
		}
		b.WriteString(`cd /d "` + windowsDir(cmd.Dir, "%USERPROFILE%") + `" || exit 1 & `)
	}
	keys := sortedKeys(cmd.Env)
	for _, k := range keys {
		v, err := cmdQuoted("the value of "+k, k+"="+cmd.Env[k])
		if err != nil {
			return "", err
		}
		b.WriteString("set " + v + " & ")
	}
	if cmd.Shell != "" {
		if strings.ContainsAny(cmd.Shell, "\r\n") {
			return "", fmt.Errorf("%w: a line break in a cmd.exe command (cmd /c runs one line; join commands with &)", ErrShellUnsupported)
		}
		b.WriteString(cmd.Shell)
		return b.String(), nil
	}
	for i, a := range cmd.Argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		q, err := QuoteCmdArg(a, i == 0)
		if err != nil {
			return "", err
		}
		b.WriteString(q)
	}
	return b.String(), nil
}

// windowsDir is dir with a leading ~ replaced by home, and / as \.
func windowsDir(dir, home string) string {
	switch {
	case dir == "~":
		dir = home
	case strings.HasPrefix(dir, "~/"), strings.HasPrefix(dir, `~\`):
		dir = home + `\` + dir[2:]
	}
	return strings.ReplaceAll(dir, "/", `\`)
}

// cmdQuoted double-quotes s for cmd.exe, refusing what quotes cannot hold.
func cmdQuoted(what, s string) (string, error) {
	if i := strings.IndexAny(s, "\"%!\r\n\x00"); i >= 0 {
		return "", fmt.Errorf("%w: %s holds %q, which cmd.exe would interpret inside double quotes", ErrShellUnsupported, what, s[i])
	}
	return `"` + s + `"`, nil
}

// cmdMeta are the characters cmd.exe interprets outside double quotes.
const cmdMeta = "^&|<>()\"!"

// QuoteCmdArg quotes one argument of a program that cmd.exe starts, so
// that the program, parsing its command line by the Microsoft C runtime's
// rules (CommandLineToArgvW), receives exactly s: s is quoted by those
// rules (backslashes before a quote doubled, a quote as \"), then every
// character cmd.exe interprets (^ & | < > ( ) " !) is escaped with ^, so
// that cmd.exe never sees a quote open. This assumes delayed expansion
// is off, cmd.exe's default.
//
// An argument holding % is refused (ErrShellUnsupported): cmd.exe
// expands %NAME% anywhere in a command line, quotes or not, and has no
// escape for it there (Windows leaves %NAME^% alone because no variable
// is named NAME^, but Wine's cmd removes the caret first and expands it;
// the argument would differ between the two). So is one holding a line
// break or NUL: cmd /c ends its line there.
//
// The program name (first, when set) is parsed by cmd.exe itself, which
// splits it at spaces whatever the carets: it is double-quoted without
// escapes, and a name holding a quote, %, ! or a control character is
// refused.
func QuoteCmdArg(s string, first bool) (string, error) {
	if strings.ContainsAny(s, "\r\n\x00") {
		return "", fmt.Errorf("%w: an argument holds a line break or NUL byte", ErrShellUnsupported)
	}
	if strings.ContainsRune(s, '%') {
		return "", fmt.Errorf("%w: an argument holds %%, which cmd.exe expands and cannot escape in a command line; use a PowerShell host, or put the value in a file", ErrShellUnsupported)
	}
	if first {
		if s == "" || strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == '"' || r == '%' || r == '!' }) {
			return "", fmt.Errorf("%w: program name %q (cmd.exe parses it itself: no quotes, %%, ! or control characters)", ErrShellUnsupported, s)
		}
		return `"` + s + `"`, nil
	}
	var b strings.Builder
	for _, c := range []byte(crtQuote(s)) {
		if strings.IndexByte(cmdMeta, c) >= 0 {
			b.WriteByte('^')
		}
		b.WriteByte(c)
	}
	return b.String(), nil
}

// crtQuote quotes s by the Microsoft C runtime's rules: as it is when it
// holds no space, tab or quote and is not empty, else in double quotes
// with each run of backslashes before a quote (or the end) doubled and
// each quote written \".
func crtQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\"\v") {
		return s
	}
	var b strings.Builder
	b.WriteByte('"')
	slashes := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\':
			slashes++
			b.WriteByte(c)
			continue
		case '"':
			b.WriteString(strings.Repeat(`\`, slashes+1))
		}
		slashes = 0
		b.WriteByte(c)
	}
	b.WriteString(strings.Repeat(`\`, slashes))
	b.WriteByte('"')
	return b.String()
}

// PowerShellCommandLine returns the command line for cmd on a host whose
// SSH server runs commands with PowerShell (powershell -c LINE). The
// script
//
//	[Set-Location -LiteralPath 'DIR'; ][$env:K = 'V'; …]COMMAND
//
// (COMMAND is cmd.Shell as given, in PowerShell syntax, or cmd.Argv as
// & 'ARG0' 'ARG1' …; every value in PowerShell single quotes, see
// QuotePowerShell) travels base64-encoded (UTF-8), so that no layer
// between rigout and PowerShell's parser — the C runtime's argument
// splitting, which drops double quotes — can change it:
//
//	& ([ScriptBlock]::Create([Text.Encoding]::UTF8.GetString([Convert]::FromBase64String('…')))); …
//
// followed by an exit with the script's status: its last native exit
// code, else 1 when its last command failed, else 0. Secrets come on
// standard input (one line: NAME=base64 pairs, read with
// [Console]::In.ReadLine and set as environment variables), never on a
// command line; since PowerShell reads standard input through a buffer,
// secrets together with Stdin are refused (ErrShellUnsupported). So is
// Sudo. A DIR of "~" or "~/…" starts from $HOME.
func PowerShellCommandLine(cmd Command) (string, error) {
	if err := cmd.Validate(); err != nil {
		return "", err
	}
	if cmd.Sudo {
		return "", fmt.Errorf("%w: sudo on a Windows host", ErrShellUnsupported)
	}
	if len(cmd.Secrets) > 0 && cmd.Stdin != nil {
		return "", fmt.Errorf("%w: secrets together with stdin on a PowerShell host (PowerShell reads its input through a buffer, so the command would lose part of it)", ErrShellUnsupported)
	}
	var b strings.Builder
	if len(cmd.Secrets) > 0 {
		b.WriteString("$rigout_in = [Console]::In.ReadLine(); foreach ($rigout_kv in $rigout_in.Split(' ')) { $rigout_k, $rigout_v = $rigout_kv.Split('=', 2); " +
			"Set-Item -LiteralPath ('env:' + $rigout_k) -Value ([Text.Encoding]::UTF8.GetString([Convert]::FromBase64String($rigout_v))) }; " +
			"Remove-Variable rigout_in, rigout_kv, rigout_k, rigout_v; ")
	}
	switch dir := cmd.Dir; {
	case dir == "":
	case dir == "~":
		b.WriteString("Set-Location -LiteralPath $HOME; ")
	case strings.HasPrefix(dir, "~/"), strings.HasPrefix(dir, `~\`):
		b.WriteString("Set-Location -LiteralPath (Join-Path $HOME " + QuotePowerShell(dir[2:]) + "); ")
	default:
		b.WriteString("Set-Location -LiteralPath " + QuotePowerShell(dir) + "; ")
	}
	for _, k := range sortedKeys(cmd.Env) {
		if _, secret := cmd.Secrets[k]; secret {
			continue
		}
		b.WriteString("$env:" + k + " = " + QuotePowerShell(cmd.Env[k]) + "; ")
	}
	if cmd.Shell != "" {
		b.WriteString(cmd.Shell)
	} else {
		b.WriteString("&")
		for _, a := range cmd.Argv {
			b.WriteString(" " + QuotePowerShell(a))
		}
	}
	return psWrap(b.String()), nil
}

// psWrap is the command line that runs script, base64-encoded, and exits
// with its status.
func psWrap(script string) string {
	enc := base64.StdEncoding.EncodeToString([]byte(script))
	return "& ([ScriptBlock]::Create([Text.Encoding]::UTF8.GetString([Convert]::FromBase64String('" + enc + "')))); " +
		"$rigout_ok = $?; if ($LASTEXITCODE) { exit $LASTEXITCODE }; if (-not $rigout_ok) { exit 1 }; exit 0"
}

// PowerShellSecretsLine is the line of standard input that carries secrets to
// PowerShellCommandLine's script: NAME=base64(value) pairs.
func PowerShellSecretsLine(secrets map[string]string) string {
	parts := make([]string, 0, len(secrets))
	for _, k := range sortedKeys(secrets) {
		parts = append(parts, k+"="+base64.StdEncoding.EncodeToString([]byte(secrets[k])))
	}
	return strings.Join(parts, " ") + "\n"
}

// QuotePowerShell returns s as a PowerShell single-quoted string: nothing
// in it is expanded; each quote character — ' and the typographic ‘ ’ ‚ ‛,
// which PowerShell also takes for single quotes — is doubled. Invalid
// UTF-8 is replaced with U+FFFD, since a script is text.
func QuotePowerShell(s string) string {
	s = strings.ToValidUTF8(s, string(utf8.RuneError))
	var b strings.Builder
	b.WriteByte('\'')
	for _, r := range s {
		b.WriteRune(r)
		if r == '\'' || r == '‘' || r == '’' || r == '‚' || r == '‛' {
			b.WriteRune(r)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// ShellMismatchError means a command judged for one shell was about to be
// sent to a host that runs another (Command.JudgedFor): it was not sent.
type ShellMismatchError struct {
	Host      string
	JudgedFor Shell // the shell the command was judged for
	Runs      Shell // the shell the host runs
}

// Error says which shell the host runs and which the command was judged
// for.
func (e *ShellMismatchError) Error() string {
	return fmt.Sprintf("exec: %s runs %s, and the command was judged as %s: not sent (run it again: the host's shell is now known)", e.Host, e.Runs, e.JudgedFor)
}

// ParseShellProbe reads the output of ShellProbe run by a host's login
// shell: which shell ran it, and false when the output does not say.
func ParseShellProbe(out string) (Shell, bool) {
	for line := range strings.SplitSeq(out, "\n") {
		line = strings.TrimSpace(line)
		rest, ok := strings.CutPrefix(line, "rigout-shell:")
		if !ok {
			continue
		}
		switch {
		case rest == "Windows_NT:$?":
			return ShellCmd, true
		case rest == "%OS%:True" || rest == "%OS%:False":
			return ShellPowerShell, true
		case strings.HasPrefix(rest, "%OS%:") && len(rest) > 5 && strings.Trim(rest[5:], "0123456789") == "":
			return ShellPOSIX, true
		}
	}
	return "", false
}
