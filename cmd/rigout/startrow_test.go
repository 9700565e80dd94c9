package main

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/sqlite"
)

// slowStart delays the server.start row, as a slow fsync would.
type slowStart struct {
	gatewayLedger
	release chan struct{}
}

func (s *slowStart) Record(ctx context.Context, e audit.Event) error {
	if e.Type == audit.TypeServerStart {
		<-s.release
	}
	return s.gatewayLedger.Record(ctx, e)
}

// TestStartGate: the server.start row is committed in the background, and
// a call's intent row recorded meanwhile waits for it: it is neither
// acknowledged before server.start is durable nor written ahead of it.
func TestStartGate(t *testing.T) {
	ctx := context.Background()
	l, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "audit.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	slow := &slowStart{gatewayLedger: l, release: make(chan struct{})}
	g := openStartGate(ctx, slow, audit.Event{Type: audit.TypeServerStart, Time: time.Now().UTC(), Principal: "stdio",
		Transport: "stdio", Status: audit.StatusOK}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	recorded := make(chan error, 1)
	go func() {
		recorded <- g.Record(ctx, audit.Event{Type: audit.TypeToolCall, Phase: audit.PhaseIntent, Tool: "execute_command",
			Time: time.Now().UTC(), Principal: "stdio", Transport: "stdio", Status: audit.StatusOK})
	}()
	select {
	case err := <-recorded:
		t.Fatalf("the intent row was recorded before server.start (err %v)", err)
	case <-time.After(200 * time.Millisecond):
	}
	close(slow.release)
	if err := <-recorded; err != nil {
		t.Fatal(err)
	}
	g.wait()
	evs, err := l.Query(ctx, audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || evs[0].Type != audit.TypeServerStart || evs[1].Phase != audit.PhaseIntent {
		t.Fatalf("ledger rows %+v, want server.start then the intent", evs)
	}
	// A caller that gives up while waiting is told so.
	slow2 := &slowStart{gatewayLedger: l, release: make(chan struct{})}
	g2 := openStartGate(ctx, slow2, audit.Event{Type: audit.TypeServerStart,
		Time: time.Now().UTC(), Status: audit.StatusOK}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := g2.Record(cctx, audit.Event{Type: audit.TypeToolCall, Time: time.Now().UTC(), Status: audit.StatusOK}); err == nil {
		t.Fatal("a canceled wait recorded anyway")
	}
	close(slow2.release)
	g2.wait()
}
