package main

import (
	"context"
	"log/slog"

	"github.com/rigout/rigout/audit"
)

// startGate is the ledger as the gateway of `rigout stdio` sees it while
// the server.start row is being committed: the row is committed in the
// background, so that the client's initialize and tools/list are answered
// without waiting for the ledger's fsync, and every other row (a call's
// intent above all) waits until it is durable. Nothing that can change the
// machine runs before its intent row, which comes after server.start, so
// the order in the ledger and the fail-closed guarantee are unchanged.
type startGate struct {
	gatewayLedger
	ready chan struct{} // closed once the server.start row is committed or failed
}

// openStartGate commits e (the server.start row) through l in the
// background and returns l gated on it. A failure is logged; the rows
// after it then meet the ledger's own error.
func openStartGate(ctx context.Context, l gatewayLedger, e audit.Event, logger *slog.Logger) *startGate {
	g := &startGate{gatewayLedger: l, ready: make(chan struct{})}
	go func() {
		defer close(g.ready)
		if err := l.Record(context.WithoutCancel(ctx), e); err != nil {
			logger.Error("audit ledger: recording server.start failed", "err", err)
		}
	}()
	return g
}

// Record waits for the server.start row, then records e.
func (g *startGate) Record(ctx context.Context, e audit.Event) error {
	select {
	case <-g.ready:
	case <-ctx.Done():
		return ctx.Err()
	}
	return g.gatewayLedger.Record(ctx, e)
}

// wait returns once the server.start row is committed or failed.
func (g *startGate) wait() { <-g.ready }
