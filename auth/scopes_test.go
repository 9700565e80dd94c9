package auth_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/rigout/rigout/auth"
)

func TestMatchGlob(t *testing.T) {
	tests := map[[2]string]bool{
		{"*", ""}:                                    true,
		{"*", "anything"}:                            true,
		{"read_*", "read_file"}:                      true,
		{"read_*", "read_"}:                          true,
		{"read_*", "xread_file"}:                     false,
		{"*_command", "execute_command"}:             true,
		{"exec?", "execs"}:                           true,
		{"exec?", "exec"}:                            false,
		{"a*b*c", "aXXbYYc"}:                         true,
		{"a*b*c", "aXXbYY"}:                          false,
		{"*.example.com", "web.example.com"}:         true,
		{"*.example.com", "example.com"}:             false,
		{"[ab]", "a"}:                                false, // no character classes
		{"[ab]", "[ab]"}:                             true,
		{"é*", "éa"}:                                 true,
		{"*a*a*a*a*a*a*b", strings.Repeat("a", 200)}: false,
	}
	for in, want := range tests {
		if got := auth.MatchGlob(in[0], in[1]); got != want {
			t.Errorf("match(%q, %q) = %v, want %v", in[0], in[1], got, want)
		}
	}
}

func TestScopes(t *testing.T) {
	s := auth.Scopes{Tools: []string{"read_*", "search_files"}, Hosts: []string{"web-*", "Local"}, Roots: []string{"/srv/app", "/tmp/"}, ReadOnly: true}
	tests := []struct {
		name string
		got  bool
		want bool
	}{
		{"tool glob", s.AllowTool("read_file"), true},
		{"tool literal", s.AllowTool("search_files"), true},
		{"tool outside", s.AllowTool("execute_command"), false},
		{"tool case", s.AllowTool("Read_file"), false},
		{"host glob", s.AllowHost("web-1"), true},
		{"host case-insensitive", s.AllowHost("LOCAL"), true},
		{"host outside", s.AllowHost("db-1"), false},
		{"path in root", s.AllowPath("/srv/app/config.yml"), true},
		{"path is root", s.AllowPath("/srv/app"), true},
		{"sibling prefix", s.AllowPath("/srv/app-evil/x"), false},
		{"dotdot", s.AllowPath("/srv/app/../etc/passwd"), false},
		{"relative", s.AllowPath("srv/app/x"), false},
		{"trailing slash root", s.AllowPath("/tmp/x"), true},
		{"no roots", auth.Scopes{}.AllowPath("/etc/passwd"), true},
		{"zero allows no tool", auth.Scopes{}.AllowTool("x"), false},
		{"zero allows no host", auth.Scopes{}.AllowHost("local"), false},
		{"full", auth.FullScopes().IsFull(), true},
		{"not full", s.IsFull(), false},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, tt.got, tt.want)
		}
	}
}

func TestScopeErrors(t *testing.T) {
	narrow := auth.Scopes{Tools: []string{"read_*"}, Hosts: []string{"local"}, Roots: []string{"/srv"}, ReadOnly: true}
	tests := []struct {
		name      string
		err       error
		wantScope string
	}{
		{"tool", narrow.RequireTool("execute_command"), "tools:execute_command"},
		{"host", narrow.RequireHost("db-1"), "hosts:db-1"},
		{"path", narrow.RequirePath("/etc/my file"), "roots:/etc/my%20file"},
		{"write", narrow.RequireWrite(), "write"},
		{"bypass", narrow.RequireBypass(), "bypass"},
		{"terminals", narrow.RequireTerminals(), "terminals"},
	}
	for _, tt := range tests {
		var se *auth.ScopeError
		if !errors.As(tt.err, &se) || se.Scope != tt.wantScope || !strings.Contains(tt.err.Error(), tt.wantScope) {
			t.Errorf("%s: %v", tt.name, tt.err)
		}
	}
	if err := narrow.RequireBypass(); !strings.Contains(err.Error(), "bypass_security") {
		t.Errorf("bypass refusal does not say why: %v", err)
	}
	if err := narrow.RequireApprove(); err == nil || !strings.Contains(err.Error(), "approve") {
		t.Errorf("approve refusal: %v", err)
	}
	if full := auth.FullScopes(); full.Approve || full.InteractiveClient || full.AskBypass {
		t.Errorf("FullScopes grants approvals or trusts the client: %+v", full)
	}
	full := auth.FullScopes()
	for _, err := range []error{full.RequireTool("x"), full.RequireHost("h"), full.RequirePath("/x"), full.RequireWrite(), full.RequireBypass(), full.RequireTerminals()} {
		if err != nil {
			t.Errorf("full scopes refused: %v", err)
		}
	}
}

func TestScopesStringRoundTrip(t *testing.T) {
	for _, s := range []auth.Scopes{
		auth.FullScopes(),
		{Tools: []string{"read_*"}, Hosts: []string{"web-?"}, Roots: []string{"/srv/my app", "/tmp"}, ReadOnly: true},
		{Approve: true},
		{Tools: []string{"*"}, InteractiveClient: true, AskBypass: true},
		{},
	} {
		got, err := auth.ParseScopes(s.String())
		if err != nil || !reflect.DeepEqual(got, s) {
			t.Errorf("%q → %+v, %v; want %+v", s.String(), got, err, s)
		}
	}
	for _, bad := range []string{"admin", "tools:", `tools:a"b`, "roots:relative", "roots:%zz"} {
		if _, err := auth.ParseScopes(bad); err == nil {
			t.Errorf("ParseScopes(%q) accepted", bad)
		}
	}
}

func TestIsLoopback(t *testing.T) {
	tests := map[string]bool{
		"127.0.0.1":          true,
		"127.0.0.1:8765":     true,
		"127.1.2.3":          true,
		"127.255.255.254:80": true,
		"::1":                true,
		"[::1]":              true,
		"[::1]:8765":         true,
		"::ffff:127.0.0.1":   true,
		"localhost":          true,
		"LocalHost:8765":     true,
		"localhost.":         false,
		"localhost.evil":     false,
		"0.0.0.0":            false,
		"0.0.0.0:8765":       false,
		"::":                 false,
		"[::]:8765":          false,
		":8765":              false,
		"":                   false,
		"128.0.0.1":          false,
		"10.0.0.1":           false,
		"127.1":              false,
		"::1%lo":             false,
		"[::1%lo]:80":        false,
		"example.com":        false,
		"127.0.0.1:99999":    false,
		"127.0.0.1:":         false,
		"[::1":               false,
		"not an address":     false,
	}
	for in, want := range tests {
		if got := auth.IsLoopback(in); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestMatchRedirect(t *testing.T) {
	reg := []string{"http://127.0.0.1/callback", "http://[::1]/cb", "http://localhost:3000/cb?x=1", "https://app.example.com/cb"}
	tests := map[string]bool{
		"http://127.0.0.1/callback":        true,
		"http://127.0.0.1:55555/callback":  true,
		"http://[::1]:4444/cb":             true,
		"http://localhost:9/cb?x=1":        true,
		"http://localhost:9/cb":            false,
		"http://127.0.0.1:55555/callback/": false,
		"http://127.0.0.1:5/callback#f":    false,
		"http://127.0.0.2:5/callback":      false,
		"https://127.0.0.1:5/callback":     false,
		"http://u@127.0.0.1:5/callback":    false,
		"https://app.example.com/cb":       true,
		"https://app.example.com:8443/cb":  false,
		"https://APP.example.com/cb":       false,
		"https://app.example.com/cb?x=1":   false,
		"http://app.example.com/cb":        false,
	}
	for in, want := range tests {
		if got := auth.MatchRedirect(reg, in); got != want {
			t.Errorf("MatchRedirect(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestAllowReach(t *testing.T) {
	tests := []struct {
		name  string
		hosts []string
		reach string
		adHoc bool
		want  bool
	}{
		{"glob admits a configured name", []string{"web*"}, "web1", false, true},
		{"glob does not admit an address", []string{"web*"}, "web@127.0.0.2:1", true, false},
		{"a glob that would match the address still does not", []string{"web@*"}, "web@127.0.0.2:1", true, false},
		{"the exact address", []string{"web@127.0.0.2:1"}, "web@127.0.0.2:1", true, true},
		{"the exact address, case folded", []string{"WEB@127.0.0.2:1"}, "web@127.0.0.2:1", true, true},
		{"star admits everything", []string{"*"}, "web@127.0.0.2:1", true, true},
		{"local by name", []string{"local"}, "local", false, true},
		{"no scope", nil, "web1", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := auth.Scopes{Hosts: tt.hosts}
			if got := s.AllowReach(tt.reach, tt.adHoc); got != tt.want {
				t.Errorf("AllowReach(%q, %v) with %v = %v, want %v", tt.reach, tt.adHoc, tt.hosts, got, tt.want)
			}
			var se *auth.ScopeError
			if err := s.RequireReach(tt.reach, tt.adHoc); (err == nil) != tt.want || (err != nil && (!errorsAs(err, &se) || se.Scope != "hosts:"+tt.reach)) {
				t.Errorf("RequireReach = %v", err)
			}
		})
	}
}
