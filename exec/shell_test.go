package exec_test

import (
	"encoding/base64"
	"errors"
	"regexp"
	"strings"
	"testing"

	rexec "github.com/rigout/rigout/exec"
)

func TestQuoteCmdArg(t *testing.T) {
	tests := []struct {
		in    string
		first bool
		want  string
		err   error
	}{
		{in: "plain", want: "plain"},
		{in: "", want: `^"^"`},
		{in: "a b", want: `^"a b^"`},
		{in: `say "hi"`, want: `^"say \^"hi\^"^"`},
		{in: `C:\dir\`, want: `C:\dir\`},
		{in: `C:\my dir\`, want: `^"C:\my dir\\^"`},
		{in: `a\"b`, want: `^"a\\\^"b^"`},
		{in: "a&b|c<d>e^f(g)h!", want: "a^&b^|c^<d^>e^^f^(g^)h^!"},
		{in: "50%", err: rexec.ErrShellUnsupported},
		{in: "%PATH%", err: rexec.ErrShellUnsupported},
		{in: "two\nlines", err: rexec.ErrShellUnsupported},
		{in: "git", first: true, want: `"git"`},
		{in: `C:\Program Files\Git\bin\git.exe`, first: true, want: `"C:\Program Files\Git\bin\git.exe"`},
		{in: `a"b`, first: true, err: rexec.ErrShellUnsupported},
		{in: `a!b`, first: true, err: rexec.ErrShellUnsupported},
	}
	for _, tt := range tests {
		got, err := rexec.QuoteCmdArg(tt.in, tt.first)
		if !errors.Is(err, tt.err) || err == nil && got != tt.want {
			t.Errorf("QuoteCmdArg(%q, %v) = %q, %v; want %q, %v", tt.in, tt.first, got, err, tt.want, tt.err)
		}
		if err == nil && !tt.first {
			if back := cmdThenCRT(got); len(back) != 1 || back[0] != tt.in {
				t.Errorf("QuoteCmdArg(%q) = %q, which parses back as %q", tt.in, got, back)
			}
		}
	}
}

func TestCmdCommandLine(t *testing.T) {
	tests := []struct {
		name string
		cmd  rexec.Command
		want string
		err  error
	}{
		{name: "shell as is", cmd: rexec.Command{Shell: `dir /b & echo "x" > out.txt`}, want: `dir /b & echo "x" > out.txt`},
		{name: "dir", cmd: rexec.Command{Shell: "dir", Dir: `C:\work\a&b`}, want: `cd /d "C:\work\a&b" || exit 1 & dir`},
		{name: "dir with slashes", cmd: rexec.Command{Shell: "dir", Dir: "C:/work"}, want: `cd /d "C:\work" || exit 1 & dir`},
		{name: "home", cmd: rexec.Command{Shell: "dir", Dir: "~/src"}, want: `cd /d "%USERPROFILE%\src" || exit 1 & dir`},
		{name: "env", cmd: rexec.Command{Shell: "set", Env: map[string]string{"B": "x&y|z", "A": "1 2"}}, want: `set "A=1 2" & set "B=x&y|z" & set`},
		{name: "argv", cmd: rexec.Command{Argv: []string{"git", "commit", "-m", `fix "it" & go`}}, want: `"git" commit -m ^"fix \^"it\^" ^& go^"`},
		{name: "dir with a quote", cmd: rexec.Command{Shell: "dir", Dir: `C:\a"b`}, err: rexec.ErrShellUnsupported},
		{name: "dir with a percent", cmd: rexec.Command{Shell: "dir", Dir: `C:\%OS%`}, err: rexec.ErrShellUnsupported},
		{name: "env with a percent", cmd: rexec.Command{Shell: "set", Env: map[string]string{"A": "%PATH%"}}, err: rexec.ErrShellUnsupported},
		{name: "env with a quote", cmd: rexec.Command{Shell: "set", Env: map[string]string{"A": `a" & format c: & "`}}, err: rexec.ErrShellUnsupported},
		{name: "secrets refused", cmd: rexec.Command{Shell: "set", Secrets: map[string]string{"TOKEN": "s3cret"}}, err: rexec.ErrShellUnsupported},
		{name: "sudo refused", cmd: rexec.Command{Shell: "dir", Sudo: true}, err: rexec.ErrShellUnsupported},
		{name: "line break refused", cmd: rexec.Command{Shell: "dir\r\nformat c:"}, err: rexec.ErrShellUnsupported},
		{name: "no command", cmd: rexec.Command{}, err: rexec.ErrNoCommand},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := rexec.CmdCommandLine(tt.cmd)
			if !errors.Is(err, tt.err) || err == nil && got != tt.want {
				t.Fatalf("CmdCommandLine = %q, %v; want %q, %v", got, err, tt.want, tt.err)
			}
			if err != nil && strings.Contains(err.Error(), "s3cret") {
				t.Errorf("the error shows the secret: %v", err)
			}
		})
	}
}

var psScript = regexp.MustCompile(`FromBase64String\('([A-Za-z0-9+/=]*)'\)`)

// psDecode returns the script a PowerShell command line carries.
func psDecode(t *testing.T, line string) string {
	t.Helper()
	m := psScript.FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("no script in %q", line)
	}
	b, err := base64.StdEncoding.DecodeString(m[1])
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestPowerShellCommandLine(t *testing.T) {
	tests := []struct {
		name   string
		cmd    rexec.Command
		script string
		err    error
	}{
		{name: "shell as is", cmd: rexec.Command{Shell: `Get-ChildItem "C:\x" | Select -First 1`}, script: `Get-ChildItem "C:\x" | Select -First 1`},
		{name: "dir and env", cmd: rexec.Command{Shell: "gci", Dir: `C:\it's`, Env: map[string]string{"A": "$(rm x) `n ’q"}},
			script: `Set-Location -LiteralPath 'C:\it''s'; $env:A = '$(rm x) ` + "`" + `n ’’q'; gci`},
		{name: "home", cmd: rexec.Command{Shell: "gci", Dir: "~"}, script: `Set-Location -LiteralPath $HOME; gci`},
		{name: "argv", cmd: rexec.Command{Argv: []string{"git", "log", "--format=%H $x"}}, script: `& 'git' 'log' '--format=%H $x'`},
		{name: "sudo refused", cmd: rexec.Command{Shell: "gci", Sudo: true}, err: rexec.ErrShellUnsupported},
		{name: "secrets and stdin refused", cmd: rexec.Command{Shell: "gci", Secrets: map[string]string{"T": "x"}, Stdin: strings.NewReader("in")}, err: rexec.ErrShellUnsupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line, err := rexec.PowerShellCommandLine(tt.cmd)
			if !errors.Is(err, tt.err) {
				t.Fatalf("PowerShellCommandLine = %q, %v; want %v", line, err, tt.err)
			}
			if err != nil {
				return
			}
			if got := psDecode(t, line); got != tt.script {
				t.Errorf("script = %q; want %q", got, tt.script)
			}
			// What travels is base64 and fixed text: no double quote for a
			// C runtime to drop, no run of spaces to collapse.
			if strings.ContainsAny(line, "\"\t\n") || strings.Contains(line, "  ") {
				t.Errorf("line %q holds characters an argument splitter may change", line)
			}
		})
	}
	// Secrets travel on stdin, not in the line.
	line, err := rexec.PowerShellCommandLine(rexec.Command{Shell: "gci", Secrets: map[string]string{"TOKEN": "s3cret value"}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(line, "s3cret") || strings.Contains(psDecode(t, line), "s3cret") ||
		strings.Contains(line, base64.StdEncoding.EncodeToString([]byte("s3cret value"))) {
		t.Errorf("the secret is in the command line: %q", psDecode(t, line))
	}
}

func TestQuotePowerShell(t *testing.T) {
	for in, want := range map[string]string{
		"":              "''",
		"plain":         "'plain'",
		"it's":          "'it''s'",
		"$env:PATH `n":  "'$env:PATH `n'",
		"‘a’ ‚b‛":       "'‘‘a’’ ‚‚b‛‛'",
		"bad\xffutf8":   "'bad\uFFFDutf8'",
		"two\r\nlines;": "'two\r\nlines;'",
	} {
		got := rexec.QuotePowerShell(in)
		if got != want {
			t.Errorf("QuotePowerShell(%q) = %q; want %q", in, got, want)
		}
		if back, ok := psSingleQuoted(got); !ok || back != strings.ToValidUTF8(in, "\uFFFD") {
			t.Errorf("QuotePowerShell(%q) = %q parses back as %q, %v", in, got, back, ok)
		}
	}
}

// FuzzQuoteCmdArg round-trips arguments through QuoteCmdArg, cmd.exe's
// escape and quote handling and the C runtime's argument splitting, as
// modelled by cmdThenCRT (TestCmdUnderWine checks the model's cmd.exe
// half against Wine's cmd on the seeds).
func FuzzQuoteCmdArg(f *testing.F) {
	for _, s := range cmdSeeds {
		f.Add(s, "b")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		qa, errA := rexec.QuoteCmdArg(a, false)
		qb, errB := rexec.QuoteCmdArg(b, false)
		if errA != nil || errB != nil {
			for _, s := range []string{a, b} {
				if _, err := rexec.QuoteCmdArg(s, false); err != nil && !strings.ContainsAny(s, "%\r\n\x00") {
					t.Fatalf("QuoteCmdArg(%q) refused: %v", s, err)
				}
			}
			return
		}
		got := cmdThenCRT(qa + " " + qb)
		if len(got) != 2 || got[0] != a || got[1] != b {
			t.Fatalf("%q %q quoted as %q %q parse back as %q", a, b, qa, qb, got)
		}
	})
}

// FuzzQuotePowerShell round-trips strings through QuotePowerShell and a
// reader of PowerShell single-quoted strings (psSingleQuoted).
func FuzzQuotePowerShell(f *testing.F) {
	for _, s := range cmdSeeds {
		f.Add(s)
	}
	f.Add("‘’'")
	f.Fuzz(func(t *testing.T, s string) {
		q := rexec.QuotePowerShell(s)
		back, ok := psSingleQuoted(q)
		if !ok || back != strings.ToValidUTF8(s, "\uFFFD") {
			t.Fatalf("%q quoted as %q parses back as %q, %v", s, q, back, ok)
		}
	})
}

var cmdSeeds = []string{
	"", "plain", "a b", `"`, `""`, `\`, `\\`, `a\`, `a\\`, `a\"b`, `\\"`, "a&b", "a|b", "a^b", "^", "^^",
	"<>", "(x)", "!x!", "a\tb", ` lead`, `trail `, `C:\Program Files\`, `"quoted arg"`, `x=1;y=2,z`,
	`& format c: &`, `" & format c: & "`, "^\"&\"^", "é ü 日本",
}

// cmdThenCRT models what a program started by cmd.exe /c receives: cmd.exe
// removes ^ escapes outside double quotes (a " toggles them; ^" is a
// literal quote that does not), then the program splits what is left by
// the Microsoft C runtime's rules.
func cmdThenCRT(line string) []string {
	var b strings.Builder
	quoted := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '"':
			quoted = !quoted
			b.WriteByte(c)
		case c == '^' && !quoted && i+1 < len(line):
			i++
			b.WriteByte(line[i])
		case c == '^' && !quoted:
		default:
			b.WriteByte(c)
		}
	}
	return crtSplit(b.String())
}

// crtSplit splits a command-line tail by the Microsoft C runtime's rules
// (2008 and later): whitespace separates arguments outside quotes; 2n
// backslashes before a quote are n backslashes and the quote toggles
// quoting, 2n+1 are n and a literal quote; "" inside quotes is a literal
// quote; other backslashes are literal.
func crtSplit(s string) []string {
	var args []string
	var b strings.Builder
	in, quoted := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case (c == ' ' || c == '\t') && !quoted:
			if in {
				args = append(args, b.String())
				b.Reset()
				in = false
			}
		case c == '\\':
			n := 0
			for i < len(s) && s[i] == '\\' {
				n++
				i++
			}
			if i < len(s) && s[i] == '"' {
				b.WriteString(strings.Repeat(`\`, n/2))
				if n%2 == 1 {
					b.WriteByte('"')
				} else {
					quoted = !quoted
				}
			} else {
				b.WriteString(strings.Repeat(`\`, n))
				i--
			}
			in = true
		case c == '"':
			if quoted && i+1 < len(s) && s[i+1] == '"' {
				b.WriteByte('"')
				i++
			} else {
				quoted = !quoted
			}
			in = true
		default:
			b.WriteByte(c)
			in = true
		}
	}
	if in {
		args = append(args, b.String())
	}
	return args
}

// psSingleQuoted reads one PowerShell single-quoted string that is the
// whole of s: any of ' ‘ ’ ‚ ‛ opens and closes it, and a doubled one
// stands for itself.
func psSingleQuoted(s string) (string, bool) {
	isQ := func(r rune) bool { return r == '\'' || r == '‘' || r == '’' || r == '‚' || r == '‛' }
	rs := []rune(s)
	if len(rs) < 2 || !isQ(rs[0]) || !isQ(rs[len(rs)-1]) {
		return "", false
	}
	var b strings.Builder
	for i := 1; i < len(rs)-1; i++ {
		if isQ(rs[i]) {
			if i+1 >= len(rs)-1 || !isQ(rs[i+1]) {
				return "", false // an unescaped quote ends the string early
			}
			i++
		}
		b.WriteRune(rs[i])
	}
	return b.String(), true
}
