package validate_test

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/rigout/rigout/validate"
)

// FuzzCheck asserts that every input gets a consistent decision, the same
// one twice, and that checking never panics (Check recovers from a panic by
// refusing with too-complex, which the fuzzer reports as a failure).
func FuzzCheck(f *testing.F) {
	for _, c := range checkCases {
		f.Add(c.cmd, c.sudo)
	}
	for _, table := range groupCases() {
		for _, c := range table {
			f.Add(c.cmd, c.sudo)
		}
	}
	for _, c := range readOnlyCases {
		f.Add(c, false)
	}
	for _, c := range notReadOnlyCases {
		f.Add(c, false)
	}
	f.Fuzz(func(t *testing.T, cmd string, sudo bool) {
		var p validate.Policy
		opts := validate.Options{AllowSudo: sudo}
		start := time.Now()
		d1 := p.Check(cmd, opts)
		if d := time.Since(start); d > 20*time.Second {
			// Not a timing test: a check this slow is a runaway, which
			// the fuzzer should report with its input.
			t.Fatalf("Check(%q) took %v", cmd, d)
		}
		d2 := p.Check(cmd, opts)
		if d1 != d2 {
			t.Fatalf("Check(%q) is not deterministic:\n%+v\n%+v", cmd, d1, d2)
		}
		consistent(t, cmd, d1)
		if strings.Contains(d1.Reason, "checker failed") {
			t.Fatalf("Check(%q) panicked: %s", cmd, d1.Reason)
		}
		if utf8.ValidString(cmd) && len(cmd) < 4096 {
			argv := strings.Fields(cmd)
			if len(argv) > 0 {
				a1 := p.CheckArgv(argv, opts)
				a2 := p.CheckArgv(argv, opts)
				if a1 != a2 {
					t.Fatalf("CheckArgv(%q) is not deterministic:\n%+v\n%+v", argv, a1, a2)
				}
				consistent(t, cmd, a1)
				if strings.Contains(a1.Reason, "checker failed") {
					t.Fatalf("CheckArgv(%q) panicked: %s", argv, a1.Reason)
				}
			}
		}
	})
}

func consistent(t *testing.T, cmd string, d validate.Decision) {
	t.Helper()
	if d.Allowed {
		if d.Rule != "" || d.Reason != "" || d.Confirm {
			t.Fatalf("Check(%q) allowed with a rule: %+v", cmd, d)
		}
		return
	}
	if d.ReadOnly {
		t.Fatalf("Check(%q) refused but read-only: %+v", cmd, d)
	}
	if d.Rule == "" || d.Reason == "" || d.Hint == "" {
		t.Fatalf("Check(%q) refused without rule, reason or hint: %+v", cmd, d)
	}
	known := false
	for _, r := range validate.Rules() {
		known = known || r.ID == d.Rule
	}
	if !known {
		t.Fatalf("Check(%q) names unknown rule %q", cmd, d.Rule)
	}
}
