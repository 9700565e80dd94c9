package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/transport"
)

// prototypeEventStore serves the fixture the way package transport would
// if it configured mcp-go's event store (server.WithEventStore): the same
// auth front (Host/Origin guard, then bearer token) in front of mcp-go's
// streamable HTTP handler, but with an in-memory event store, which makes
// every POST's SSE stream resumable and, as a side effect, closes a race in
// mcp-go v1.2.1 that drops the last notification a tool sends before it
// returns (see test/interop/README.md). It exists to measure that fix with
// the conformance suite; package transport does not offer the option yet,
// so this path has no body cap, 405 answers or session binding.
func prototypeEventStore(f *fixture, front *auth.Front, logger *slog.Logger) func(context.Context, net.Listener) error {
	mcpHTTP := server.NewStreamableHTTPServer(f.gw.MCPServer(),
		server.WithEndpointPath(transport.DefaultPath),
		server.WithStreamableHTTPLogger(logger),
		server.WithEventStore(server.NewInMemoryEventStore()),
		server.WithSessionIdleTTL(transport.DefaultSessionIdleTTL),
	)
	mux := http.NewServeMux()
	mux.Handle(transport.DefaultPath, front.Guard(front.RequireBearer(mcpHTTP)))
	return func(ctx context.Context, ln net.Listener) error {
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		errc := make(chan error, 1)
		go func() { errc <- srv.Serve(ln) }()
		select {
		case err := <-errc:
			return err
		case <-ctx.Done():
		}
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = mcpHTTP.Shutdown(sctx)
		if err := srv.Shutdown(sctx); err != nil {
			_ = srv.Close()
		}
		if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}

// settleNotifications is a prototype of a gateway fix for the other half of
// the race: mcp-go v1.2.1 queues a tool's notifications on its session's
// one channel, which the call's own POST stream and the client's standalone
// GET stream both read, so a notification can reach the client on the GET
// stream after the call's result has arrived on the POST stream (a progress
// notification that arrives after the result is discarded by the client).
// The middleware holds each result until the session's queue is empty (at
// most maxSettle) and then for grace more, so that whichever stream took
// the last notification has written it before the result is written. Only
// streamable HTTP sessions need it: stdio and in-process clients get
// notifications and results in order on one stream.
func settleNotifications(grace time.Duration) rigout.Middleware {
	return func(next rigout.Handler) rigout.Handler {
		return func(ctx context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
			res, err := next(ctx, call)
			s, ok := server.ClientSessionFromContext(ctx).(server.SessionWithStreamableHTTPConfig)
			if !ok {
				return res, err
			}
			queue := s.NotificationChannel()
			for deadline := time.Now().Add(maxSettle); len(queue) > 0 && time.Now().Before(deadline); {
				if sleep(ctx, time.Millisecond) != nil {
					return res, err
				}
			}
			_ = sleep(ctx, grace)
			return res, err
		}
	}
}

// maxSettle bounds how long settleNotifications waits for a session's
// notification queue to empty.
const maxSettle = time.Second
