package sessions_test

import (
	"context"
	"errors"
	"regexp"
	"testing"

	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/sessions"
)

// Two Managers stand for two gateways. IDs made by gateway A carry its
// (sanitized) name after a random part; gateway B, asked about one, returns
// an ElsewhereError naming A, which is still ErrNotFound; an unknown ID
// naming B itself, or no gateway, is plain ErrNotFound; A finds its own.
func TestIDsNameTheirGateway(t *testing.T) {
	a := newManager(t, sessions.Config{Instance: "gw-a/../\x00évil"})
	b := newManager(t, sessions.Config{Instance: "gw-b"})
	if a.Instance() != "gw-a..vil" {
		t.Fatalf("instance name not sanitized: %q", a.Instance())
	}
	p, err := a.Start(context.Background(), "alice", exec.Command{Argv: []string{"true"}})
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^p[0-9a-f]{12}@gw-a\.\.vil$`).MatchString(p.ID()) || sessions.InstanceOf(p.ID()) != "gw-a..vil" {
		t.Fatalf("process ID %q", p.ID())
	}
	if q, err := a.Get("alice", p.ID()); err != nil || q != p {
		t.Fatalf("A does not find its own process: %v", err)
	}
	_, err = b.Get("alice", p.ID())
	var ee *sessions.ElsewhereError
	if !errors.As(err, &ee) || ee.Owner != "gw-a..vil" || ee.Here != "gw-b" || !errors.Is(err, sessions.ErrNotFound) {
		t.Fatalf("B on A's process: %v", err)
	}
	// Another principal's ID on its own gateway stays "not found".
	if _, err := a.Get("bob", p.ID()); !errors.Is(err, sessions.ErrNotFound) || errors.As(err, &ee) {
		t.Fatalf("bob on A: %v", err)
	}
	for _, id := range []string{"p0123456789ab@gw-b", "p0123456789ab", ""} {
		if _, err := b.Get("alice", id); err != sessions.ErrNotFound {
			t.Errorf("B.Get(%q) = %v, want ErrNotFound", id, err)
		}
		if _, err := b.Terminal("alice", id); err != sessions.ErrNotFound {
			t.Errorf("B.Terminal(%q) = %v, want ErrNotFound", id, err)
		}
	}
	if _, err := b.Terminal("alice", "t0123456789ab@gw-a..vil"); !errors.As(err, &ee) || ee.Owner != "gw-a..vil" {
		t.Errorf("B.Terminal on A's ID: %v", err)
	}
	// Random parts differ.
	q, err := a.Start(context.Background(), "alice", exec.Command{Argv: []string{"true"}})
	if err != nil {
		t.Fatal(err)
	}
	if q.ID() == p.ID() {
		t.Fatal("two processes got one ID")
	}
}
