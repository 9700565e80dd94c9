package ui_test

import (
	"strings"
	"testing"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/ui"
)

// TestRowStateInWords: a row says how it ended in words, and shows what
// ran, bounded.
func TestRowStateInWords(t *testing.T) {
	code := func(n int) *int { return &n }
	tests := []struct {
		name string
		e    audit.Event
		want string
	}{
		{"exit 0", audit.Event{Status: audit.StatusOK, ExitCode: code(0)}, "exited 0"},
		{"no command", audit.Event{Status: audit.StatusOK}, "ok"},
		{"exit 2", audit.Event{Status: audit.StatusError, ExitCode: code(2)}, "exited 2"},
		{"killed", audit.Event{Status: audit.StatusError, ExitCode: code(-1), Signal: "SIGKILL"}, "killed by SIGKILL"},
		{"stopped process", audit.Event{Type: audit.TypeProcessExit, Status: audit.StatusCanceled, ExitCode: code(-1), Error: "sessions: stopped"}, "stopped"},
		{"canceled call", audit.Event{Status: audit.StatusCanceled, ExitCode: code(-1)}, "canceled"},
		{"hand-off", audit.Event{Status: audit.StatusBackground}, "running in the background"},
		{"refused", audit.Event{Status: audit.StatusDenied}, "refused"},
		{"failed without exit", audit.Event{Status: audit.StatusError, ExitCode: code(-1)}, "failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ui.RowOf(tt.e).State; got != tt.want {
				t.Errorf("state %q, want %q", got, tt.want)
			}
		})
	}
	long := `{"command":"echo ` + strings.Repeat("é", 400) + `"}`
	r := ui.RowOf(audit.Event{Args: long})
	if !strings.HasPrefix(r.Ran, "echo é") || len(r.Ran) > 310 || !strings.HasSuffix(r.Ran, "…") {
		t.Errorf("a long command in a row: %d bytes, %q…", len(r.Ran), r.Ran[:20])
	}
}
