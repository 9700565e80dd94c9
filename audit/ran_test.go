package audit_test

import (
	"testing"

	"github.com/rigout/rigout/audit"
)

func TestEventRan(t *testing.T) {
	for args, want := range map[string]string{
		"":                         "",
		`{"command":"ls -l /tmp"}`: "ls -l /tmp",
		`{"argv":["grep","-r","two words","it's"]}`:     `grep -r 'two words' 'it'\''s'`,
		`{"argv":["touch",""]}`:                         "touch ''",
		`{"action":"read","path":"/etc/hosts"}`:         "read /etc/hosts",
		`{"action":"signal","id":"p1","signal":"KILL"}`: "signal p1",
		"sleep 70 # a process.start row":                "sleep 70 # a process.start row",
		`{"environment":{"A":"b"}}`:                     "",
	} {
		if got := (audit.Event{Args: args}).Ran(); got != want {
			t.Errorf("Ran of %s = %q, want %q", args, got, want)
		}
	}
}
