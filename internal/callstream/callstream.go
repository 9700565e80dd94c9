// Package callstream carries, in the context of one request, the stream its
// response is written on, so that what a tool call sends while it runs
// (progress, log messages) is written on that same stream, in order, before
// the call's result. The transport puts a [Writer] in the request's
// context; the gateway sends a call's notifications through it and stops
// when the call's handler has returned, so no timer orders anything: a
// notification is on the connection when Send returns, and the result is
// written only after the handler returns.
package callstream

import (
	"context"
	"errors"
)

// ErrEnded means the stream takes no more messages: the request's response
// has been written, or the transport cannot stream it. The sender falls
// back to the session's own delivery.
var ErrEnded = errors.New("callstream: the response stream has ended")

// Writer writes whole JSON-RPC messages on a request's response stream.
// Implementations are safe for concurrent use.
type Writer interface {
	// Send writes msg, one encoded JSON-RPC message, and returns once it
	// has been handed to the connection. It returns ErrEnded, having
	// written nothing, when the stream takes no more messages.
	Send(msg []byte) error
}

type key struct{}

// With returns ctx carrying w.
func With(ctx context.Context, w Writer) context.Context {
	return context.WithValue(ctx, key{}, w)
}

// From returns the Writer ctx carries, or nil.
func From(ctx context.Context) Writer {
	w, _ := ctx.Value(key{}).(Writer)
	return w
}
