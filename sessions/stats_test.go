package sessions_test

import (
	"context"
	"testing"

	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/sessions"
)

// TestStats counts running processes and open terminals of every
// principal, and stops counting them when they end.
func TestStats(t *testing.T) {
	m := newManager(t, sessions.Config{})
	ctx := context.Background()
	if s := m.Stats(); s != (sessions.Stats{}) {
		t.Fatalf("empty manager: %+v", s)
	}
	a, err := m.Start(ctx, "alice", exec.Command{Shell: "sleep " + marker()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Start(ctx, "bob", exec.Command{Shell: "sleep " + marker()}); err != nil {
		t.Fatal(err)
	}
	term, err := m.OpenTerminal(ctx, "carol", sessions.TerminalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s := m.Stats(); s.Running != 2 || s.Terminals != 1 {
		t.Fatalf("two processes and a terminal: %+v", s)
	}
	if err := a.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := m.CloseTerminal("carol", term.ID()); err != nil {
		t.Fatal(err)
	}
	if s := m.Stats(); s.Running != 1 || s.Terminals != 0 {
		t.Fatalf("after stopping one and closing the terminal: %+v", s)
	}
}
