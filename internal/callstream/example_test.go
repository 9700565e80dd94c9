package callstream_test

import (
	"context"
	"fmt"

	"github.com/rigout/rigout/internal/callstream"
)

// lines is a Writer that prints each message: a transport's would write
// it on the request's response stream.
type lines struct{ ended bool }

func (l *lines) Send(msg []byte) error {
	if l.ended {
		return callstream.ErrEnded
	}
	fmt.Println(string(msg))
	return nil
}

// The transport puts the request's stream in its context; the gateway
// finds it there and sends the call's notifications on it until the
// handler returns.
func Example() {
	w := &lines{}
	ctx := callstream.With(context.Background(), w)
	if s := callstream.From(ctx); s != nil {
		_ = s.Send([]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`))
	}
	w.ended = true // the handler returned: what comes later takes the session's way
	fmt.Println(callstream.From(ctx).Send([]byte(`{}`)))
	fmt.Println(callstream.From(context.Background()) == nil)
	// Output:
	// {"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}
	// callstream: the response stream has ended
	// true
}
