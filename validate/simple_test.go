package validate_test

import (
	"slices"
	"testing"

	"github.com/rigout/rigout/validate"
)

func TestDecisionArgv(t *testing.T) {
	var p validate.Policy
	for line, want := range map[string][]string{
		"ls -la":           {"ls", "-la"},
		"true":             {"true"},
		"false":            {"false"},
		`grep "a b" 'c d'`: {"grep", "a b", "c d"},
		"cat ''":           {"cat", ""},
		"make build ;":     {"make", "build"},
	} {
		if got := p.Check(line, validate.Options{}).Argv(); !slices.Equal(got, want) {
			t.Errorf("Check(%q).Argv() = %q, want %q", line, got, want)
		}
	}
	for _, line := range []string{
		"echo hi", "true x", "cd /tmp", "pwd", "printf x", "test -f x", "kill 1", "exec ls", "command ls",
		"ls *", "ls ~", "ls a=~", "ls $HOME", "ls $(x)", "ls > x", "ls 2>&1", "X=1 ls", "ls; ls", "ls | wc",
		"ls &", "! ls", "/bin/ls", "./x", "{ ls; }", "(ls)", "ls \\x", "ls $'x'", "time ls", "rm -rf /",
	} {
		if got := p.Check(line, validate.Options{}).Argv(); got != nil {
			t.Errorf("Check(%q).Argv() = %q, want nil: bash would not run it as that argv", line, got)
		}
	}
	if got := p.CheckArgv([]string{"ls"}, validate.Options{}).Argv(); got != nil {
		t.Errorf("CheckArgv().Argv() = %q, want nil", got)
	}
}
