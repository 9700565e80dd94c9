package files

import (
	"slices"
	"testing"

	"github.com/rigout/rigout/validate"
)

func TestSFTPWindowsPath(t *testing.T) {
	for in, want := range map[string]string{
		`C:\Users\a`:        "/C:/Users/a",
		"c:/Users/a/":       "/C:/Users/a",
		"/C:/Users/a":       "/C:/Users/a",
		`C:\`:               "/C:/",
		"C:":                "/C:/",
		`D:\a\..\..\..\b`:   "/D:/b",
		`C:\Program Files\`: "/C:/Program Files",
		`build\out`:         "build/out",
	} {
		if got := sftpWindowsPath(in); got != want {
			t.Errorf("sftpWindowsPath(%q) = %q; want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"/C:/Users/a": `C:\Users\a`, "/C:/": `C:\`, "build/out": `build\out`} {
		if got := windowsNative(in); got != want {
			t.Errorf("windowsNative(%q) = %q; want %q", in, got, want)
		}
	}
}

// TestWindowsFileActions: a file action on a Windows host is judged by the
// Windows policy, through the cmd.exe command it amounts to.
func TestWindowsFileActions(t *testing.T) {
	tests := []struct {
		argv []string
		want []string
		rule string // "" when allowed
	}{
		{[]string{"rm", "-r", "-f", "--", "/C:/"}, []string{"rmdir", "/s", "/q", `C:\`}, validate.RuleRecursiveDeleteRoot},
		{[]string{"rm", "-r", "-f", "--", "/C:/Windows"}, []string{"rmdir", "/s", "/q", `C:\Windows`}, validate.RuleRecursiveDeleteRoot},
		{[]string{"rm", "-r", "-f", "--", "/C:/work/build"}, []string{"rmdir", "/s", "/q", `C:\work\build`}, ""},
		{[]string{"rm", "--", "/C:/Windows/System32/config/SAM"}, []string{"del", `C:\Windows\System32\config\SAM`}, validate.RuleCriticalFileWrite},
		{[]string{"tee", "--", "/C:/Windows/System32/drivers/etc/hosts"}, []string{"del", `C:\Windows\System32\drivers\etc\hosts`}, validate.RuleCriticalFileWrite},
		{[]string{"tee", "-a", "--", "/C:/work/log.txt"}, []string{"del", `C:\work\log.txt`}, ""},
		{[]string{"mv", "--", "/C:/Users", "/D:/x"}, []string{"move", `C:\Users`, `D:\x`}, validate.RuleMoveRoot},
		{[]string{"chmod", "-R", "777", "--", "/C:/Windows"}, []string{"icacls", `C:\Windows`, "/t"}, validate.RuleRecursiveChmodRoot},
		{[]string{"chown", "-R", "me", "--", "/C:/"}, []string{"takeown", "/f", `C:\`, "/r"}, validate.RuleRecursiveChmodRoot},
		{[]string{"mkdir", "-p", "--", "/C:/work/new"}, []string{"dir", `C:\work\new`}, ""},
	}
	for _, tt := range tests {
		got := windowsArgv(tt.argv)
		if !slices.Equal(got, tt.want) {
			t.Errorf("windowsArgv(%q) = %q; want %q", tt.argv, got, tt.want)
			continue
		}
		d := (*validate.Policy)(nil).CheckArgv(got, validate.Options{Dialect: validate.DialectCmd})
		if d.Allowed != (tt.rule == "") || d.Rule != tt.rule {
			t.Errorf("%q judged %+v; want rule %q", got, d, tt.rule)
		}
	}
}
