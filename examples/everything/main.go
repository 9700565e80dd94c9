// Command everything is the conformance fixture server: an embedder's
// program, built only on rigout's public API (the gateway's tool registry,
// package transport and package auth) and mcp-go's types, that exposes
// every fixture the official MCP conformance suite
// (@modelcontextprotocol/conformance) looks for in its server scenarios:
//
//   - tools greet, slow_compute and failing_job for the tasks extension
//     (io.modelcontextprotocol/tasks, served by Gateway.TasksHTTP: calls of
//     the last two that outlast 200 ms become tasks), test_simple_text,
//     test_custom_headers (x-mcp-header),
//     test_image_content, test_audio_content, test_embedded_resource,
//     test_multiple_content_types, test_tool_with_logging, test_logging_tool,
//     test_tool_with_progress, test_error_handling, test_sampling,
//     test_elicitation, test_elicitation_sep1034_defaults,
//     test_elicitation_sep1330_enums and json_schema_2020_12_tool, all rows
//     of the gateway's registry, so every call passes the gateway's schema
//     check and middleware;
//   - resources test://static-text, test://static-binary and
//     test://watched-resource (with subscriptions: update_watched_resource
//     sends notifications/resources/updated to subscribed sessions), and the
//     template test://template/{id}/data;
//   - prompts test_simple_prompt, test_prompt_with_arguments,
//     test_prompt_with_embedded_resource and test_prompt_with_image, with
//     completions for the prompt arguments and the template's {id}.
//
// It serves streamable HTTP on a loopback address behind a bearer token,
// with the Host and Origin checks of package auth, or stdio with -stdio:
//
//	EVERYTHING_AUTH_TOKEN=secret go run ./examples/everything -addr 127.0.0.1:0
//
// prints "everything listening on http://127.0.0.1:PORT/mcp" on stderr.
// Without EVERYTHING_AUTH_TOKEN a token is generated and printed there once.
// test/interop/run.sh runs the conformance suite against it.
package main

import (
	"context"
	"crypto/rand"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/transport"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr, nil); err != nil {
		fmt.Fprintln(os.Stderr, "everything:", err)
		os.Exit(1)
	}
}

// run serves until ctx is done or, with -stdio, until stdin ends. Over HTTP
// it sends the MCP endpoint's URL on ready (if not nil) once it accepts
// connections.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer, ready chan<- string) error {
	fs := flag.NewFlagSet("everything", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8780", "listen address (loopback)")
	stdio := fs.Bool("stdio", false, "serve MCP on stdin and stdout instead of HTTP")
	verbose := fs.Bool("v", false, "log debug messages")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	f, err := newFixture(logger)
	if err != nil {
		return err
	}
	defer f.Close()

	if *stdio {
		return transport.ServeStdio(ctx, f.gw.MCPServer(), stdin, stdout, transport.StdioConfig{Logger: logger})
	}

	token := getenv("EVERYTHING_AUTH_TOKEN")
	generated := token == ""
	if generated {
		if token, err = auth.GenerateToken(rand.Reader); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	bound := ln.Addr().String()
	url := "http://" + bound + transport.DefaultPath
	front, err := auth.New(auth.Config{
		Tokens:      []auth.Token{{Name: "conformance", Secret: auth.NewSecret(token), Scopes: auth.FullScopes()}},
		Listener:    bound,
		ResourceURL: url,
		Name:        "rigout-everything",
		Logger:      logger,
	})
	if err != nil {
		return err
	}
	h, err := transport.NewHTTP(f.gw.MCPServer(), transport.HTTPConfig{
		Name:         "rigout-everything",
		Guard:        front.Guard,
		Auth:         func(h http.Handler) http.Handler { return front.RequireBearer(f.gw.TasksHTTP(h)) },
		Routes:       front.Routes(),
		SessionOwner: sessionOwner,
		Health:       func() map[string]any { return f.gw.Health().Fields() },
		Logger:       logger,
	})
	if err != nil {
		return err
	}
	defer h.Close()

	fmt.Fprintf(stderr, "everything listening on %s\n", url)
	if generated {
		// Shown once, to the operator; never logged.
		fmt.Fprintf(stderr, "Authorization: Bearer %s\n", token)
	}
	if ready != nil {
		ready <- url
	}
	return h.Serve(ctx, ln)
}

// sessionOwner binds each protocol session to the token that opened it, as
// the reference binary does.
func sessionOwner(r *http.Request) string {
	p, ok := auth.FromContext(r.Context())
	if !ok {
		return ""
	}
	return p.Name + "\x00" + p.GrantID
}
