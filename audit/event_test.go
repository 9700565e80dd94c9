package audit_test

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/rigout/rigout/audit"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		e       audit.Event
		wantErr error
	}{
		{"one-shot event", audit.Event{Type: audit.TypeServerStart}, nil},
		{"intent", audit.Event{Type: audit.TypeToolCall, Phase: audit.PhaseIntent}, nil},
		{"done", audit.Event{Type: audit.TypeToolCall, Phase: audit.PhaseDone, Time: time.Now()}, nil},
		{"unknown type is allowed", audit.Event{Type: "custom.thing"}, nil},
		{"empty type", audit.Event{}, audit.ErrInvalidEvent},
		{"reserved type", audit.Event{Type: audit.TypePrune}, audit.ErrInvalidEvent},
		{"reserved prefix", audit.Event{Type: "audit.anything"}, audit.ErrInvalidEvent},
		{"bad phase", audit.Event{Type: "tool.call", Phase: "later"}, audit.ErrInvalidEvent},
		{"time before 1970", audit.Event{Type: "tool.call", Time: time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC)}, audit.ErrInvalidEvent},
		{"time after 2261", audit.Event{Type: "tool.call", Time: time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)}, audit.ErrInvalidEvent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.e.Validate(); !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Errorf("Validate = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

func TestSanitize(t *testing.T) {
	e := audit.Event{
		Type: "tool.call", Error: "bad \xff byte", Args: strings.Repeat("é", 1<<16),
		Status: "o\xffk", Decision: "al\xfflow",
		Duration: -time.Second, StdoutBytes: -1, StderrBytes: -2,
	}
	e.Sanitize()
	if e.Error != "bad \uFFFD byte" || e.Status != "o\uFFFDk" || e.Decision != "al\uFFFDlow" {
		t.Errorf("invalid UTF-8 kept: %q %q %q", e.Error, e.Status, e.Decision)
	}
	if e.Duration != 0 || e.StdoutBytes != 0 || e.StderrBytes != 0 {
		t.Errorf("negative numbers kept: %+v", e)
	}
	if len(e.Args) > 64<<10 || !strings.HasSuffix(e.Args, " bytes cut]") || !utf8.ValidString(e.Args) {
		t.Errorf("Args of %d bytes not cut cleanly: ...%q", len(e.Args), e.Args[len(e.Args)-30:])
	}
	clean := audit.Event{Type: "tool.call", Error: "fine", Duration: time.Second}
	c := clean
	c.Sanitize()
	if c != clean {
		t.Errorf("Sanitize changed a clean event: %+v", c)
	}
}

// TestPrepareAppend: what every ledger does to an event before storing it.
func TestPrepareAppend(t *testing.T) {
	code := 3
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	e := audit.Event{Type: "tool.call", Args: `{"a":1}`, ExitCode: &code, Seq: 9, Hash: "h", PrevHash: "p", Duration: -time.Second}
	if err := e.PrepareAppend(false, false, func() time.Time { return now }); err != nil {
		t.Fatal(err)
	}
	if e.Args != "" || e.Seq != 0 || e.Hash != "" || e.PrevHash != "" || e.Duration != 0 || !e.Time.Equal(now) {
		t.Fatalf("prepared: %+v", e)
	}
	if e.ExitCode == &code || *e.ExitCode != 3 {
		t.Fatalf("ExitCode shares the caller's pointer or changed: %v", e.ExitCode)
	}
	kept := audit.Event{Type: "tool.call", Args: `{"a":1}`, Time: now.Add(-time.Hour)}
	if err := kept.PrepareAppend(true, false, time.Now); err != nil || kept.Args == "" || !kept.Time.Equal(now.Add(-time.Hour)) {
		t.Fatalf("keepArgs and a set Time: %+v, %v", kept, err)
	}
	reservedType := audit.Event{Type: "audit.head.mismatch"}
	if err := reservedType.PrepareAppend(false, false, time.Now); !errors.Is(err, audit.ErrInvalidEvent) {
		t.Fatalf("a reserved type from a caller: %v, want ErrInvalidEvent", err)
	}
	if err := reservedType.PrepareAppend(false, true, time.Now); err != nil {
		t.Fatalf("a reserved type from the ledger itself: %v", err)
	}
}
