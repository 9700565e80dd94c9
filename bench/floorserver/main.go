// Command floorserver is the floor that bench compares rigout's HTTP
// transport with: the least a Go program must do to answer MCP tool calls
// over HTTP. It is a plain net/http handler that decodes each JSON-RPC
// request and encodes an answer, with no authentication, no audit, no
// schema validation and no sessions.
//
//	floorserver [--addr 127.0.0.1:0] [--max-output 1048576]
//
// It answers server/discover and initialize with a minimal result and
// notifications with 202. A tools/call whose arguments hold "argv" (an
// array of strings) or "command" (a string, run by bash -c) runs it, keeps
// the first --max-output bytes of each output stream and discards the rest,
// and answers with the exit code: the floor for execute_command. A
// tools/call of create_terminal_session starts `bash --noprofile --norc
// --noediting -i` (the shell rigout's terminal sessions run) on a new
// pseudo-terminal (creack/pty), waits for its first prompt, keeps it open
// and drains its output, and answers with its session_id;
// close_terminal_session {session_id} hangs it up and waits for it to exit:
// the floor for holding terminal sessions. Any other tools/call is echoed
// back as text: the ceiling of a JSON handler on this machine.
//
// It listens on loopback only and prints "listening on URL" on stderr once
// it accepts connections. It stops on SIGINT or SIGTERM.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

func run(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("floorserver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:0", "loopback listen address")
	maxOutput := fs.Int("max-output", 1<<20, "bytes kept per output stream of a command")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	host, _, err := net.SplitHostPort(*addr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		fmt.Fprintf(stderr, "floorserver: %s is not a loopback address\n", *addr)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "floorserver: %v\n", err)
		return 1
	}
	h := &handler{maxOutput: *maxOutput, shell: shellPath(), terms: &terminals{open: map[string]*terminal{}}}
	mux := http.NewServeMux()
	mux.Handle("POST /mcp", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(stderr, "floorserver listening on http://%s/mcp\n", ln.Addr())
	select {
	case err := <-served:
		fmt.Fprintf(stderr, "floorserver: %v\n", err)
		return 1
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		_ = srv.Close()
	}
	<-served
	h.terms.closeAll()
	return 0
}

// shellPath is the shell that runs "command": bash, like rigout, else sh.
func shellPath() string {
	if p, err := exec.LookPath("bash"); err == nil {
		return p
	}
	return "/bin/sh"
}

// handler answers JSON-RPC requests. It is safe for concurrent use; its
// fields do not change after it is built (terms guards itself).
type handler struct {
	maxOutput int
	shell     string
	terms     *terminals
}

type request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	} `json:"params"`
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type text struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type toolResult struct {
	Content    []text         `json:"content"`
	Structured map[string]any `json:"structuredContent,omitempty"`
	IsError    bool           `json:"isError,omitempty"`
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req request
	if err := json.NewDecoder(io.LimitReader(r.Body, 4<<20)).Decode(&req); err != nil {
		http.Error(w, "bad JSON", http.StatusBadRequest)
		return
	}
	if len(req.ID) == 0 { // a notification
		w.WriteHeader(http.StatusAccepted)
		return
	}
	resp := response{JSONRPC: "2.0", ID: req.ID}
	info := map[string]string{"name": "floorserver", "version": "1"}
	switch req.Method {
	case "server/discover":
		resp.Result = map[string]any{"supportedVersions": []string{"2026-07-28"}, "capabilities": map[string]any{"tools": map[string]any{}}, "serverInfo": info}
	case "initialize":
		resp.Result = map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"tools": map[string]any{}}, "serverInfo": info}
	case "tools/call":
		switch req.Params.Name {
		case "create_terminal_session":
			resp.Result = h.terms.create(h.shell)
		case "close_terminal_session":
			id, _ := req.Params.Arguments["session_id"].(string)
			resp.Result = h.terms.close(id)
		default:
			resp.Result = h.call(r.Context(), req.Params.Arguments)
		}
	default:
		resp.Error = &rpcError{Code: -32601, Message: "method not found: " + req.Method}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

// call runs argv or command when the arguments hold one, else echoes them.
func (h *handler) call(ctx context.Context, args map[string]any) toolResult {
	var argv []string
	switch {
	case args["argv"] != nil:
		list, _ := args["argv"].([]any)
		for _, a := range list {
			s, _ := a.(string)
			argv = append(argv, s)
		}
	case args["command"] != nil:
		s, _ := args["command"].(string)
		argv = []string{h.shell, "-c", s}
	default:
		b, _ := json.Marshal(args)
		return toolResult{Content: []text{{Type: "text", Text: string(b)}}}
	}
	if len(argv) == 0 || argv[0] == "" {
		return toolResult{Content: []text{{Type: "text", Text: "empty argv"}}, IsError: true}
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	stdout := &capped{max: h.maxOutput}
	stderr := &capped{max: h.maxOutput}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	var exit *exec.ExitError
	code := 0
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		return toolResult{Content: []text{{Type: "text", Text: err.Error()}}, IsError: true}
	}
	return toolResult{Content: []text{{Type: "text", Text: "exit " + strconv.Itoa(code) + "\n" + stdout.buf.String() + stderr.buf.String()}}}
}

// capped keeps the first max bytes written to it and counts the rest.
type capped struct {
	max     int
	buf     bytes.Buffer
	dropped int64
}

func (c *capped) Write(p []byte) (int, error) {
	keep := min(len(p), c.max-c.buf.Len())
	if keep > 0 {
		c.buf.Write(p[:keep])
	}
	c.dropped += int64(len(p) - keep)
	return len(p), nil
}
