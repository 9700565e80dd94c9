package statedir

import (
	"os"
	"path/filepath"
	"testing"
)

func TestResolve(t *testing.T) {
	env := func(m map[string]string) func(string) string {
		return func(k string) string { return m[k] }
	}
	tests := []struct {
		name   string
		flag   string
		env    map[string]string
		euid   int
		exists bool // ~/.local/state/rigout exists
		want   string
	}{
		{"root gets the system dir", "", map[string]string{"HOME": "/root"}, 0, false, SystemDir},
		{"root keeps an existing home dir", "", map[string]string{"HOME": "/root"}, 0, true, "/root/.local/state/rigout"},
		{"root with xdg", "", map[string]string{"XDG_STATE_HOME": "/x/xdg", "HOME": "/root"}, 0, false, "/x/xdg/rigout"},
		{"flag wins", "/x/flag", map[string]string{EnvVar: "/x/env"}, 1000, false, "/x/flag"},
		{"env", "", map[string]string{EnvVar: "/x/env", "XDG_STATE_HOME": "/x/xdg"}, 1000, false, "/x/env"},
		{"xdg", "", map[string]string{"XDG_STATE_HOME": "/x/xdg", "HOME": "/h"}, 1000, false, "/x/xdg/rigout"},
		{"relative xdg ignored", "", map[string]string{"XDG_STATE_HOME": "rel", "HOME": "/h"}, 1000, false, "/h/.local/state/rigout"},
		{"home", "", map[string]string{"HOME": "/h"}, 1000, false, "/h/.local/state/rigout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := resolve(tt.flag, env(tt.env), tt.euid, func(string) bool { return tt.exists })
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Resolve = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestEnsure(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "state")
	open, err := Ensure(dir)
	if err != nil || open {
		t.Fatalf("Ensure = %v, %v", open, err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("mode = %v, want 0700", fi.Mode().Perm())
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	open, err = Ensure(dir)
	if err != nil || !open {
		t.Errorf("Ensure on 0755 = %v, %v; want a warning", open, err)
	}
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Ensure(f); err == nil {
		t.Error("Ensure on a file: want error")
	}
}

// TestFlag: a printed command names the state directory only when it is
// not the one rigout would find by itself, quoted for the shell.
func TestFlag(t *testing.T) {
	getenv := func(k string) string {
		if k == EnvVar {
			return "/srv/rigout state"
		}
		return ""
	}
	if got := Flag("/srv/rigout state", getenv); got != "" {
		t.Errorf("Flag(the default) = %q, want nothing", got)
	}
	if got, want := Flag("/tmp/other dir", getenv), " --state-dir '/tmp/other dir'"; got != want {
		t.Errorf("Flag(another) = %q, want %q", got, want)
	}
}
