package auth_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/rigout/rigout/auth"
)

// A Front in front of a plain handler: the handler runs only with the
// right token, and sees who called, never the token.
func Example() {
	front, err := auth.New(auth.Config{
		Tokens: []auth.Token{
			{Name: "ci", Secret: auth.NewSecret("s3cr3t-token-0123456789"), Scopes: auth.Scopes{Tools: []string{"read_*"}, Hosts: []string{"*"}, ReadOnly: true}},
		},
		Listener:    "127.0.0.1:8765",
		ResourceURL: "http://127.0.0.1:8765/mcp",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	h := front.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := auth.FromContext(r.Context())
		fmt.Fprintf(w, "hello %s; may run execute_command: %v", p.Name, p.Scopes.AllowTool("execute_command"))
	}))

	for _, hdr := range []string{"", "Bearer wrong", "Bearer s3cr3t-token-0123456789"} {
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8765/mcp", nil)
		if hdr != "" {
			req.Header.Set("Authorization", hdr)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		fmt.Println(rec.Code, strings.TrimSpace(rec.Body.String()))
		if ch := rec.Header().Get("WWW-Authenticate"); ch != "" {
			fmt.Println("    WWW-Authenticate:", ch)
		}
	}
	// Output:
	// 401 {"error":"unauthorized","error_description":"a valid bearer token is required in the Authorization header"}
	//     WWW-Authenticate: Bearer resource_metadata="http://127.0.0.1:8765/.well-known/oauth-protected-resource/mcp"
	// 401 {"error":"unauthorized","error_description":"a valid bearer token is required in the Authorization header"}
	//     WWW-Authenticate: Bearer error="invalid_token", resource_metadata="http://127.0.0.1:8765/.well-known/oauth-protected-resource/mcp"
	// 200 hello ci; may run execute_command: false
}

// Scope checks in a tool handler turn into errors that name the missing
// scope.
func ExampleScopes_RequireTool() {
	s := auth.Scopes{Tools: []string{"read_*", "search_files"}, Hosts: []string{"web-*"}}
	fmt.Println(s.RequireTool("read_file"))
	fmt.Println(s.RequireTool("execute_command"))
	fmt.Println(s.RequireBypass())

	var se *auth.ScopeError
	if errors.As(s.RequireHost("db-1"), &se) {
		fmt.Println("missing:", se.Scope)
	}
	// Output:
	// <nil>
	// auth: missing scope tools:execute_command: this token may not call tool execute_command
	// auth: missing scope bypass: bypass_security: true needs a token with the bypass scope; this token does not have it
	// missing: hosts:db-1
}

func ExampleIsLoopback() {
	for _, a := range []string{"127.0.0.1:8765", "127.3.4.5", "[::1]:8765", "localhost", "0.0.0.0:8765", ":8765", "192.168.1.2"} {
		fmt.Println(a, auth.IsLoopback(a))
	}
	// Output:
	// 127.0.0.1:8765 true
	// 127.3.4.5 true
	// [::1]:8765 true
	// localhost true
	// 0.0.0.0:8765 false
	// :8765 false
	// 192.168.1.2 false
}

// Secrets never reach a log line or a formatted string.
func ExampleSecret() {
	tok := auth.NewSecret("s3cr3t-token-0123456789")
	log := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
	log.InfoContext(context.Background(), "issued", "token", tok)
	fmt.Printf("%v %s\n", tok, tok)
	fmt.Println(tok.Reveal() == "s3cr3t-token-0123456789")
	// Output:
	// level=INFO msg=issued token=[REDACTED]
	// [REDACTED] [REDACTED]
	// true
}

// GenerateToken reads 32 bytes; pass crypto/rand.Reader outside tests.
func ExampleGenerateToken() {
	tok, err := auth.GenerateToken(bytes.NewReader(make([]byte, 32)))
	fmt.Println(tok, len(tok), err)
	// Output:
	// AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA 43 <nil>
}

// The Usage section of the package documentation: a Front composed in
// front of an MCP handler, behind a body cap, in an http.Server. The body
// of run is the documented code; keep the two in step.
func Example_usage() {
	tok := "s3cr3t-token-0123456789"
	logger := slog.New(slog.DiscardHandler)
	mcpHandler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := auth.FromContext(r.Context())
		fmt.Fprintf(w, "MCP for %s", p.Name)
	})
	// try calls the server's handler directly instead of on a listener.
	try := func(srv *http.Server) {
		for _, hdr := range []string{"", "Bearer " + tok, "bearer " + tok} {
			req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8765/mcp", strings.NewReader("{}"))
			if hdr != "" {
				req.Header.Set("Authorization", hdr)
			}
			rec := httptest.NewRecorder()
			srv.Handler.ServeHTTP(rec, req)
			fmt.Printf("%q: %d %s\n", strings.Replace(hdr, tok, "TOKEN", 1), rec.Code, strings.TrimSpace(rec.Body.String()))
		}
	}
	run := func() error {
		front, err := auth.New(auth.Config{
			Tokens:      []auth.Token{{Name: "default", Secret: auth.NewSecret(tok), Scopes: auth.FullScopes()}},
			Listener:    "127.0.0.1:8765",
			ResourceURL: "http://127.0.0.1:8765/mcp",
			Logger:      logger,
		})
		if err != nil {
			return err
		}
		srv := &http.Server{Handler: http.MaxBytesHandler(front.Handler(mcpHandler), 4<<20)}
		try(srv)
		return nil
	}
	if err := run(); err != nil {
		fmt.Println(err)
	}
	// Output:
	// "": 401 {"error":"unauthorized","error_description":"a valid bearer token is required in the Authorization header"}
	// "Bearer TOKEN": 200 MCP for default
	// "bearer TOKEN": 200 MCP for default
}

// The tool-handler check of the package documentation's Usage section.
func ExampleFromContext() {
	allowTool := func(ctx context.Context, name string) error {
		p, ok := auth.FromContext(ctx)
		if !ok {
			return errors.New("no principal: deny")
		}
		return p.Scopes.RequireTool(name) // "auth: missing scope tools:NAME: …"
	}

	ctx := auth.NewContext(context.Background(), auth.Principal{
		Name: "ci", Transport: auth.TransportHTTP, Scopes: auth.Scopes{Tools: []string{"read_*"}, Hosts: []string{"*"}},
	})
	fmt.Println(allowTool(context.Background(), "read_file"))
	fmt.Println(allowTool(ctx, "read_file"))
	fmt.Println(allowTool(ctx, "execute_command"))
	// Output:
	// no principal: deny
	// <nil>
	// auth: missing scope tools:execute_command: this token may not call tool execute_command
}

// An OnEvent callback records refusals as refusals and approvals as
// approvals.
func ExampleEvent_Refused() {
	for _, e := range []auth.Event{
		{Type: auth.EventDenied, RemoteAddr: "127.0.0.1:50000", Reason: "unknown token"},
		{Type: auth.EventThrottled, RemoteAddr: "127.0.0.1:50001"},
		{Type: auth.EventGrant, Principal: "oauth:cli", ClientID: "cli"},
		{Type: auth.EventSetupUsed, Principal: "setup"},
	} {
		status := "ok"
		if e.Refused() {
			status = "denied"
		}
		fmt.Println(e.Type, status)
	}
	// Output:
	// auth.deny denied
	// auth.throttled denied
	// oauth.grant ok
	// setup.used ok
}
