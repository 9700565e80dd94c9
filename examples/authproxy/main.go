// Command authproxy shows how an embedder puts package auth in front of a
// plain http.Handler: a body limit, then the Host and Origin checks, then a
// bearer token, and only then the application, which learns who called
// (the token's name and scopes) but never sees the token.
//
// Run it:
//
//	go run ./examples/authproxy -connection-file /tmp/authproxy.json
//
// With AUTHPROXY_TOKEN unset it generates a token and writes it, with the
// URL, to the owner-only connection file (or prints it once when no file is
// given). Then:
//
//	curl -H "Authorization: Bearer $TOKEN" -d '{}' http://127.0.0.1:8765/mcp
package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/rigout/rigout/auth"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr, nil); err != nil {
		fmt.Fprintln(os.Stderr, "authproxy:", err)
		os.Exit(1)
	}
}

// run serves until ctx is done. It sends the base URL on ready (if not nil)
// once it accepts connections.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, ready chan<- string) error {
	fs := flag.NewFlagSet("authproxy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8765", "listen address (loopback unless you also set -public-url)")
	publicURL := fs.String("public-url", "", "canonical URL of the /mcp endpoint when served behind a proxy")
	connFile := fs.String("connection-file", "", "write the URL and Authorization header here, owner-only")
	maxBody := fs.Int64("max-body", 4<<20, "request body limit in bytes (larger → 413)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))

	token := getenv("AUTHPROXY_TOKEN")
	generated := token == ""
	if generated {
		t, err := auth.GenerateToken(rand.Reader)
		if err != nil {
			return err
		}
		token = t
	}
	secret := auth.NewSecret(token)

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	bound := ln.Addr().String()
	resource := *publicURL
	if resource == "" {
		resource = "http://" + bound + "/mcp"
	}
	connection := map[string]any{
		"mcp": map[string]any{
			"url":     resource,
			"headers": map[string]string{"Authorization": "Bearer " + secret.Reveal()},
		},
	}
	front, err := auth.New(auth.Config{
		Tokens:         []auth.Token{{Name: "default", Secret: secret, Scopes: auth.FullScopes()}},
		Listener:       bound,
		ResourceURL:    resource,
		ConnectionData: func() any { return connection },
		Name:           "authproxy",
		Logger:         log,
	})
	if err != nil {
		return err
	}

	if *connFile != "" {
		b, _ := json.MarshalIndent(connection, "", "  ")
		if err := auth.WriteFileSecure(*connFile, append(b, '\n')); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "authproxy: serving %s; connection details in %s\n", resource, *connFile)
	} else if generated {
		// Printed once, to the operator's terminal; never logged.
		fmt.Fprintf(stdout, "authproxy: serving %s\n  token (shown once): %s\n", resource, secret.Reveal())
	} else {
		fmt.Fprintf(stdout, "authproxy: serving %s\n", resource)
	}

	srv := &http.Server{
		Handler:           limitBody(*maxBody, front.Handler(app())),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       60 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	if ready != nil {
		ready <- "http://" + bound
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// app is the plain handler being protected: it reports who called and how
// many body bytes it read.
func app() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := auth.FromContext(r.Context())
		if !ok { // unreachable behind RequireBearer; deny rather than assume
			http.Error(w, "no principal", http.StatusForbidden)
			return
		}
		n, err := io.Copy(io.Discard, r.Body)
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeJSON(w, http.StatusRequestEntityTooLarge, map[string]any{"error": "request_too_large", "limit": tooBig.Limit})
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"principal":      p.Name,
			"may_bypass":     p.Scopes.Bypass,
			"may_run_shell":  p.Scopes.AllowTool("execute_command"),
			"bytes_received": n,
		})
	})
}

// limitBody is the first layer: bodies over n bytes get 413 before any
// other check or handler reads them.
func limitBody(n int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > n {
			writeJSON(w, http.StatusRequestEntityTooLarge, map[string]any{"error": "request_too_large", "limit": n})
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, n)
		next.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
