package validate_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rigout/rigout/validate"
)

func (c checkCase) options() validate.Options {
	return validate.Options{AllowSudo: c.sudo, Dir: c.dir, Stdin: c.stdin}
}

func (c checkCase) name() string {
	var b strings.Builder
	if c.policy != nil {
		b.WriteString("policy/")
	}
	if c.sudo {
		b.WriteString("sudo/")
	}
	if c.dir != "" {
		b.WriteString("dir=" + c.dir + "/")
	}
	if c.stdin != nil {
		b.WriteString("stdin=" + *c.stdin + "/")
	}
	b.WriteString(c.cmd)
	return b.String()
}

func TestCheck(t *testing.T) {
	if len(checkCases) < 250 {
		t.Fatalf("the table has %d cases; want at least 250", len(checkCases))
	}
	for _, tt := range checkCases {
		t.Run(tt.name(), func(t *testing.T) {
			d := tt.policy.Check(tt.cmd, tt.options())
			if d.Rule != tt.rule || d.Allowed != (tt.rule == "") {
				t.Errorf("Check(%q) = %v; want rule %q", tt.cmd, d, tt.rule)
			}
			if !d.Allowed && (d.Reason == "" || d.Hint == "") {
				t.Errorf("Check(%q) refused without a reason or hint: %+v", tt.cmd, d)
			}
			if d.Allowed && (d.Rule != "" || d.Reason != "" || d.Confirm) {
				t.Errorf("Check(%q) allowed with leftovers: %+v", tt.cmd, d)
			}
		})
	}
}

var _ = fmt.Sprint
