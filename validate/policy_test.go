package validate_test

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/rigout/rigout/validate"
)

func TestDecisionErr(t *testing.T) {
	var p validate.Policy
	if err := p.Check("ls", validate.Options{}).Err(); err != nil {
		t.Fatalf("allowed command: Err() = %v", err)
	}
	err := p.Check("rm -rf /", validate.Options{}).Err()
	var de *validate.DenyError
	if !errors.As(err, &de) || de.Rule != validate.RuleRecursiveDeleteRoot || de.Reason == "" || de.Hint == "" || de.Confirm {
		t.Fatalf("Err() = %#v", err)
	}
	if !errors.Is(err, validate.ErrDenied) {
		t.Error("errors.Is(err, ErrDenied) = false")
	}
	if !strings.HasPrefix(err.Error(), "validate: refused by recursive-delete-root: ") {
		t.Errorf("Error() = %q", err.Error())
	}
	cp := validate.Policy{Rules: map[string]validate.Action{validate.RulePowerState: validate.Confirm}}
	d := cp.Check("reboot", validate.Options{})
	if d.Allowed || !d.Confirm || d.Rule != validate.RulePowerState {
		t.Fatalf("confirm rule: %+v", d)
	}
	if !errors.As(d.Err(), &de) || !de.Confirm || !strings.Contains(de.Error(), "confirmation required") {
		t.Errorf("confirm Err() = %v", d.Err())
	}
	// A deny finding wins over a confirm finding.
	d = cp.Check("reboot; rm -rf /", validate.Options{})
	if d.Confirm || d.Rule != validate.RuleRecursiveDeleteRoot {
		t.Errorf("deny and confirm: %+v", d)
	}
}

func TestDecisionJSON(t *testing.T) {
	var p validate.Policy
	b, err := json.Marshal(p.Check("ls", validate.Options{}))
	if err != nil || string(b) != `{"allowed":true,"read_only":true}` {
		t.Errorf("allowed read-only JSON = %s, %v", b, err)
	}
	b, err = json.Marshal(p.Check("make", validate.Options{}))
	if err != nil || string(b) != `{"allowed":true,"read_only":false}` {
		t.Errorf("allowed JSON = %s, %v", b, err)
	}
	b, _ = json.Marshal(p.Check("reboot", validate.Options{}))
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || m["allowed"] != false || m["rule"] != "power-state" || m["reason"] == nil || m["hint"] == nil {
		t.Errorf("refused JSON = %s", b)
	}
}

func TestModeAndActionText(t *testing.T) {
	for _, s := range []string{"deny", "allow"} {
		var m validate.Mode
		if err := m.UnmarshalText([]byte(s)); err != nil || m.String() != s {
			t.Errorf("Mode %q: %v %v", s, m, err)
		}
		if b, err := m.MarshalText(); err != nil || string(b) != s {
			t.Errorf("Mode %q marshals to %q, %v", s, b, err)
		}
	}
	var m validate.Mode
	if err := m.UnmarshalText([]byte("maybe")); !errors.Is(err, validate.ErrUnknownMode) {
		t.Errorf("bad mode: %v", err)
	}
	for _, s := range []string{"deny", "confirm", "off"} {
		var a validate.Action
		if err := a.UnmarshalText([]byte(s)); err != nil || a.String() != s {
			t.Errorf("Action %q: %v %v", s, a, err)
		}
	}
	var a validate.Action
	if err := a.UnmarshalText([]byte("perhaps")); !errors.Is(err, validate.ErrUnknownAction) {
		t.Errorf("bad action: %v", err)
	}
	if _, err := validate.Action(9).MarshalText(); !errors.Is(err, validate.ErrUnknownAction) {
		t.Errorf("Action(9).MarshalText: %v", err)
	}
	var cfg struct {
		Mode  validate.Mode
		Rules map[string]validate.Action
	}
	if err := json.Unmarshal([]byte(`{"Mode":"allow","Rules":{"sudo":"confirm"}}`), &cfg); err != nil || cfg.Mode != validate.ModeAllow || cfg.Rules["sudo"] != validate.Confirm {
		t.Errorf("JSON config: %+v %v", cfg, err)
	}
}

func TestPolicyValidate(t *testing.T) {
	var nilPolicy *validate.Policy
	if err := nilPolicy.Validate(); err != nil {
		t.Errorf("nil policy: %v", err)
	}
	if err := (&validate.Policy{}).Validate(); err != nil {
		t.Errorf("zero policy: %v", err)
	}
	tests := []struct {
		p    validate.Policy
		want error
	}{
		{validate.Policy{Mode: 7}, validate.ErrUnknownMode},
		{validate.Policy{Rules: map[string]validate.Action{"no-such": validate.Off}}, validate.ErrUnknownRule},
		{validate.Policy{Rules: map[string]validate.Action{"sudo": 9}}, validate.ErrUnknownAction},
		{validate.Policy{ProtectedRoots: []string{"relative"}}, validate.ErrBadPath},
		{validate.Policy{Devices: []string{"sda"}}, validate.ErrBadPath},
		{validate.Policy{CriticalFiles: []string{"passwd"}}, validate.ErrBadPath},
		{validate.Policy{Mode: validate.ModeAllow, Allow: []string{" "}}, validate.ErrBadPath},
	}
	for _, tt := range tests {
		if err := tt.p.Validate(); !errors.Is(err, tt.want) {
			t.Errorf("Validate(%+v) = %v; want %v", tt.p, err, tt.want)
		}
	}
}

func TestRulesTable(t *testing.T) {
	rules := validate.Rules()
	seen := map[string]bool{}
	for _, r := range rules {
		if r.ID == "" || r.Summary == "" || r.Hint == "" || seen[r.ID] {
			t.Errorf("bad rule %+v", r)
		}
		seen[r.ID] = true
		if strings.ToLower(r.ID) != r.ID || strings.ContainsAny(r.ID, " _") {
			t.Errorf("rule ID %q is not kebab-case", r.ID)
		}
	}
	rules[0].ID = "changed"
	if validate.Rules()[0].ID == "changed" {
		t.Error("Rules returns the package's table, not a copy")
	}
	for _, f := range []func() []string{validate.DefaultProtectedRoots, validate.DefaultDevices, validate.DefaultCriticalFiles} {
		l := f()
		if len(l) == 0 {
			t.Fatal("empty default list")
		}
		l[0] = "changed"
		if f()[0] == "changed" {
			t.Error("a Default function returns the package's table, not a copy")
		}
	}
}

// TestNoSharedState checks two policies side by side, concurrently, and
// that Check leaves its policy as it found it.
func TestNoSharedState(t *testing.T) {
	deny := &validate.Policy{}
	allow := &validate.Policy{Mode: validate.ModeAllow, Allow: []string{"ls"}, Rules: map[string]validate.Action{}}
	before, _ := json.Marshal(allow)
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				if d := deny.Check("git status", validate.Options{}); !d.Allowed {
					t.Errorf("deny mode refused git status: %+v", d)
				}
				if d := allow.Check("git status", validate.Options{}); d.Rule != validate.RuleNotAllowlisted {
					t.Errorf("allow mode allowed git status: %+v", d)
				}
				if d := allow.Check("ls -la", validate.Options{}); !d.Allowed {
					t.Errorf("allow mode refused ls: %+v", d)
				}
			}
		}()
	}
	wg.Wait()
	after, _ := json.Marshal(allow)
	if string(before) != string(after) {
		t.Errorf("Check modified the policy: %s -> %s", before, after)
	}
}

func TestCheckArgv(t *testing.T) {
	var p validate.Policy
	tests := []struct {
		argv []string
		rule string
	}{
		{[]string{"ls", "-la"}, ""},
		{[]string{"rm", "-rf", "/"}, validate.RuleRecursiveDeleteRoot},
		{[]string{"/bin/rm", "-rf", "/usr/"}, validate.RuleRecursiveDeleteRoot},
		{[]string{"rm", "-rf", "/*"}, ""},
		{[]string{"rm", "-rf", "~"}, ""},
		{[]string{"rm", "-rf", "$HOME"}, ""},
		{[]string{"bash", "-c", "rm -rf /"}, validate.RuleRecursiveDeleteRoot},
		{[]string{"sh", "-c", "rm -rf $HOME"}, validate.RuleRecursiveDeleteRoot},
		{[]string{"env", "FOO=1", "sudo", "ls"}, validate.RuleSudo},
		{[]string{"find", "/", "-delete"}, validate.RuleRecursiveDeleteRoot},
		{[]string{"dd", "if=/dev/zero", "of=/dev/sda"}, validate.RuleRawDeviceWrite},
		{[]string{"git", "commit", "-m", "rm -rf /"}, ""},
		{[]string{"echo", "$(rm -rf /)"}, ""},
		{[]string{"bash", "-c", "echo 'x"}, validate.RuleParseError},
		{nil, validate.RuleParseError},
		{[]string{""}, validate.RuleParseError},
		{[]string{"ls", "a\x00b"}, validate.RuleParseError},
	}
	for _, tt := range tests {
		d := p.CheckArgv(tt.argv, validate.Options{})
		if d.Rule != tt.rule || d.Allowed != (tt.rule == "") {
			t.Errorf("CheckArgv(%q) = %v; want rule %q", tt.argv, d, tt.rule)
		}
	}
}

func TestLimits(t *testing.T) {
	var p validate.Policy
	nested := strings.Repeat("eval ", 20) + "ls"
	if d := p.Check(nested, validate.Options{}); d.Rule != validate.RuleTooComplex {
		t.Errorf("20 nested evals: %v", d)
	}
	nested = "ls"
	for i := 0; i < 6; i++ {
		nested = "sh -c " + quote(nested)
	}
	if d := p.Check(nested, validate.Options{}); !d.Allowed {
		t.Errorf("6 nested sh -c: %v", d)
	}
	if d := p.Check(strings.Replace(nested, "ls", "rm -rf /", 1), validate.Options{}); d.Rule != validate.RuleRecursiveDeleteRoot {
		t.Errorf("6 nested sh -c around rm -rf /: %v", d)
	}
	long := strings.Repeat("a", 5<<20)
	if d := p.Check(long, validate.Options{}); d.Rule != validate.RuleTooComplex {
		t.Errorf("5 MiB command: %v", d.Rule)
	}
	many := strings.Repeat("true; ", 60000)
	if d := p.Check(many, validate.Options{}); d.Rule != validate.RuleTooComplex {
		t.Errorf("60000 commands: %v", d.Rule)
	}
	// A long but ordinary script is fine.
	script := strings.Repeat("echo hello world | tr a-z A-Z\n", 2000)
	if d := p.Check(script, validate.Options{}); !d.Allowed {
		t.Errorf("2000-line script: %v", d)
	}
}

func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
