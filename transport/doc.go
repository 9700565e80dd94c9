// Package transport serves a gateway's MCP server over stdio and streamable
// HTTP, with the limits an exposed server needs.
//
// # Overview
//
// [ServeStdio] speaks newline-delimited JSON-RPC on a reader and a writer.
// Every message is bounded ([StdioConfig.MaxFrame]); a longer line is
// answered with a parse error and the server keeps serving.
//
// [HTTP] serves the MCP endpoint (default /mcp), GET /health and any extra
// routes. In front of the MCP endpoint, in this order: the Guard (Host and
// Origin checks), Auth (bearer tokens, judged from the headers alone), then
// the body cap (413 and nothing runs), so a stranger's body is never read.
// Route bodies, read before any bearer check, have a smaller cap and a read
// deadline, and [HTTP.Serve] bounds the connections that have not
// authenticated, per client address and in all. Stateless mode answers GET and DELETE with 405 and a JSON body;
// stateful mode binds each protocol session to the principal that opened
// it. [HTTP.Serve] drains in-flight calls on shutdown, within a bound.
//
// # Usage
//
// srv is the *server.MCPServer to serve (the gateway's MCPServer). Over
// HTTP, behind an auth.Front built for the same listener (this runs as
// ExampleHTTP_Serve):
//
//	h, err := transport.NewHTTP(srv, transport.HTTPConfig{
//		Guard:  front.Guard,
//		Auth:   front.RequireBearer,
//		Routes: front.Routes(),
//	})
//	if err != nil {
//		return err
//	}
//	defer h.Close()
//	ln, err := net.Listen("tcp", "127.0.0.1:8765")
//	if err != nil {
//		return err
//	}
//	return h.Serve(ctx, ln) // returns after ctx is done and calls drained
//
// Over stdio, with logs kept off stdout (this runs as ExampleServeStdio):
//
//	err := transport.ServeStdio(ctx, srv, os.Stdin, os.Stdout, transport.StdioConfig{Logger: logger})
package transport
