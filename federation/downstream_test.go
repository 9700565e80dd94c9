package federation_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/rigout/rigout/exec"
)

// The test binary doubles as the downstream servers: with
// FEDTEST_DOWNSTREAM set it serves MCP on stdio instead of running tests.
func TestMain(m *testing.M) {
	exec.ServeSandboxSpawner() // the views' spawner is this binary, started again
	switch os.Getenv("FEDTEST_DOWNSTREAM") {
	case "":
		os.Exit(m.Run())
	case "stdio":
		if err := server.ServeStdio(newDownstreamServer(os.Getenv("FEDTEST_DIR"))); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	case "liar":
		lie()
		os.Exit(0)
	case "http":
		serveHTTPProcess()
		os.Exit(0)
	case "flood":
		flood()
		os.Exit(0)
	}
	os.Exit(2)
}

// newDownstreamServer is the downstream: echo, pid, progress, wait (until
// cancelled; it leaves markers in dir when it starts waiting and when
// cancelled), hang (forever, after a marker in dir), crash (the
// process exits mid-call) and grow (adds a tool).
func newDownstreamServer(dir string) *server.MCPServer {
	s := server.NewMCPServer("down", "1", server.WithToolCapabilities(true))
	s.AddTool(mcp.NewTool("echo", mcp.WithDescription("Echo msg."), mcp.WithString("msg", mcp.Required()),
		mcp.WithReadOnlyHintAnnotation(true)),
		func(_ context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("echo:" + r.GetString("msg", "")), nil
		})
	s.AddTool(mcp.NewTool("pid", mcp.WithDescription("The process ID."), mcp.WithReadOnlyHintAnnotation(true),
		mcp.WithDestructiveHintAnnotation(false), mcp.WithIdempotentHintAnnotation(true), mcp.WithOpenWorldHintAnnotation(false), mcp.WithTitleAnnotation("Process ID")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(strconv.Itoa(os.Getpid())), nil
		})
	s.AddTool(mcp.NewTool("progress", mcp.WithDescription("Report progress steps times."), mcp.WithNumber("steps")),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			steps := r.GetInt("steps", 3)
			var tok any
			if r.Params.Meta != nil {
				tok = r.Params.Meta.ProgressToken
			}
			for i := 1; i <= steps && tok != nil; i++ {
				_ = server.ServerFromContext(ctx).SendNotificationToClient(ctx, "notifications/progress",
					map[string]any{"progressToken": tok, "progress": i, "total": steps, "message": fmt.Sprintf("step %d", i)})
				time.Sleep(10 * time.Millisecond)
			}
			return mcp.NewToolResultText("done"), nil
		})
	s.AddTool(mcp.NewTool("wait", mcp.WithDescription("Wait until cancelled.")),
		func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			_ = os.WriteFile(filepath.Join(dir, "waiting"), []byte("yes"), 0o600)
			<-ctx.Done()
			_ = os.WriteFile(filepath.Join(dir, "cancelled"), []byte("yes"), 0o600)
			return nil, ctx.Err()
		})
	s.AddTool(mcp.NewTool("ask", mcp.WithDescription("Ask the person for a word.")),
		func(_ context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if ans := server.ElicitationResponse(r.Params.InputResponses, "word"); ans != nil {
				m, _ := ans.Content.(map[string]any)
				return mcp.NewToolResultText(fmt.Sprintf("%s:%v", ans.Action, m["word"])), nil
			}
			return server.NewInputRequestBuilder("").Elicit("word", mcp.ElicitationParams{
				Message: "Which word?",
				RequestedSchema: map[string]any{"type": "object",
					"properties": map[string]any{"word": map[string]any{"type": "string"}}, "required": []string{"word"}},
			}).ToolResult(), nil
		})
	s.AddTool(mcp.NewTool("hang", mcp.WithDescription("Never answer.")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			_ = os.WriteFile(filepath.Join(dir, "hanging"), []byte("yes"), 0o600)
			select {}
		})
	s.AddTool(mcp.NewTool("freeze", mcp.WithDescription("Stop the process.")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			// Stop again whenever something continues the process: one CI
			// run saw a stray SIGCONT end the stop before the gateway's
			// ping noticed it. Only the gateway's SIGKILL ends this.
			for {
				_ = syscall.Kill(os.Getpid(), syscall.SIGSTOP)
				time.Sleep(time.Millisecond)
			}
		})
	s.AddTool(mcp.NewTool("crash", mcp.WithDescription("Exit mid-call.")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			os.Exit(3)
			return nil, nil
		})
	// paths touches nothing: it reports the arguments it received, so a
	// regression of the roots check shows without harm.
	s.AddTool(mcp.NewTool("paths", mcp.WithDescription("Report the path arguments received."),
		mcp.WithString("path"), mcp.WithString("target"), mcp.WithNumber("dir"),
		mcp.WithArray("destination_paths", mcp.WithStringItems())),
		func(_ context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			b, _ := json.Marshal(r.GetArguments())
			return mcp.NewToolResultText(string(b)), nil
		})
	s.AddTool(mcp.NewTool("big", mcp.WithDescription("Return a text of size bytes."), mcp.WithNumber("size")),
		func(_ context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(strings.Repeat("x", r.GetInt("size", 0))), nil
		})
	s.AddTool(mcp.NewTool("key", mcp.WithDescription("Show FEDTEST_KEY: in the result, on stderr, and whether it is right.")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			v := os.Getenv("FEDTEST_KEY")
			fmt.Fprintf(os.Stderr, "starting with key %s\n", v)
			right := "wrong"
			if h := sha256.Sum256([]byte(v)); hex.EncodeToString(h[:]) == os.Getenv("FEDTEST_KEY_SHA") {
				right = "RIGHT"
			}
			return mcp.NewToolResultText(right + " key=" + v), nil
		})
	s.AddTool(mcp.NewTool("flood", mcp.WithDescription("Over HTTP, answer 50 MiB (see serveHTTPProcess).")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("not over HTTP"), nil
		})
	s.AddTool(mcp.NewTool("cat", mcp.WithDescription("Read the file path."), mcp.WithString("path", mcp.Required())),
		func(_ context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			b, err := os.ReadFile(r.GetString("path", ""))
			if err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			return mcp.NewToolResultText(string(b)), nil
		})
	s.AddTool(mcp.NewTool("grow", mcp.WithDescription("Add the tool extra.")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			s.AddTool(mcp.NewTool("extra", mcp.WithDescription("Added at run time.")),
				func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return mcp.NewToolResultText("extra"), nil
				})
			return mcp.NewToolResultText("grown"), nil
		})
	return s
}

// serveHTTPDownstream serves a fresh downstream over streamable HTTP on a
// loopback listener, requiring the bearer token.
func serveHTTPDownstream(t *testing.T, token string) string {
	t.Helper()
	return serveHTTP(t, newDownstreamServer(t.TempDir()), token)
}

// serveHTTP serves s over streamable HTTP on a loopback listener,
// requiring the bearer token.
func serveHTTP(t *testing.T, s *server.MCPServer, token string) string {
	t.Helper()
	h := server.NewStreamableHTTPServer(s)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "bad token", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// serveHTTPProcess serves the downstream over streamable HTTP on a
// loopback port, requiring the bearer token FEDTEST_TOKEN, and prints its
// URL on a line of its own.
func serveHTTPProcess() {
	h := server.NewStreamableHTTPServer(newDownstreamServer(os.Getenv("FEDTEST_DIR")))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("http://%s/mcp\n", ln.Addr())
	token := os.Getenv("FEDTEST_TOKEN")
	_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "bad token", http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodPost {
			// A call of flood is answered here, with a 50 MiB message
			// streamed as it is written (mcp-go would build it whole).
			body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params struct {
					Name string `json:"name"`
				} `json:"params"`
			}
			if json.Unmarshal(body, &m) == nil && m.Method == "tools/call" && m.Params.Name == "flood" {
				w.Header().Set("Content-Type", "application/json")
				writeFlood(w, m.ID)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		h.ServeHTTP(w, r)
	}))
}

// floodSize is what the flood tool answers: 50 MiB of text.
const floodSize = 50 << 20

// writeFlood writes a tools/call result holding floodSize bytes of text
// as one JSON-RPC line, in 64 KiB writes.
func writeFlood(w io.Writer, id json.RawMessage) {
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, id)
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	for n := 0; n < floodSize; n += len(chunk) {
		if _, err := w.Write(chunk); err != nil {
			return
		}
	}
	fmt.Fprint(w, "\"}]}}\n")
}

// flood is a stdio downstream written by hand: its tool flood answers with
// a 50 MiB message, echo answers as the other downstream's does.
func flood() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(out)
	for in.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name      string         `json:"name"`
				Arguments map[string]any `json:"arguments"`
			} `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &m) != nil || m.ID == nil {
			continue
		}
		var result any = map[string]any{}
		switch m.Method {
		case "initialize":
			result = map[string]any{"protocolVersion": mcp.LATEST_LEGACY_PROTOCOL_VERSION,
				"capabilities": map[string]any{"tools": map[string]any{}}, "serverInfo": map[string]any{"name": "flood", "version": "0"}}
		case "tools/list":
			obj := map[string]any{"type": "object", "properties": map[string]any{"msg": map[string]any{"type": "string"}}}
			result = map[string]any{"tools": []any{
				map[string]any{"name": "flood", "description": "Answer 50 MiB.", "inputSchema": obj},
				map[string]any{"name": "echo", "description": "Echo msg.", "inputSchema": obj},
			}}
		case "tools/call":
			if m.Params.Name == "flood" {
				writeFlood(out, m.ID)
				out.Flush()
				continue
			}
			result = map[string]any{"content": []any{map[string]any{"type": "text", "text": fmt.Sprintf("echo:%v", m.Params.Arguments["msg"])}}}
		}
		_ = enc.Encode(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result})
		out.Flush()
	}
}

// startHTTPProcess runs serveHTTPProcess in a re-executed test binary and
// returns its URL; the process is killed, by its PID, when the test ends.
func startHTTPProcess(t *testing.T, token string) string {
	t.Helper()
	cmd := osexec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "FEDTEST_DOWNSTREAM=http", "FEDTEST_TOKEN="+token, "FEDTEST_DIR="+t.TempDir())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the HTTP downstream process printed no URL: %v", err)
	}
	return strings.TrimSpace(line)
}

// lie is a downstream written by hand that lists tools no honest server
// would: a name twice, a schema that is not an object, a name the gateway
// cannot serve, and far too many.
func lie() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(in.Bytes(), &m) != nil || m.ID == nil {
			continue
		}
		var result any = map[string]any{}
		switch m.Method {
		case "initialize":
			result = map[string]any{"protocolVersion": mcp.LATEST_LEGACY_PROTOCOL_VERSION,
				"capabilities": map[string]any{"tools": map[string]any{}}, "serverInfo": map[string]any{"name": "liar", "version": "0"}}
		case "tools/list":
			obj := map[string]any{"type": "object", "properties": map[string]any{}}
			tools := []any{
				map[string]any{"name": "ok", "description": "Fine.", "inputSchema": obj},
				map[string]any{"name": "ok", "description": "Again.", "inputSchema": obj},
				map[string]any{"name": "str", "description": "Not an object.", "inputSchema": map[string]any{"type": "string"}},
				map[string]any{"name": "bad name!", "description": "Unservable.", "inputSchema": obj},
			}
			for i := range 300 {
				tools = append(tools, map[string]any{"name": fmt.Sprintf("t%d", i), "description": "One of many.", "inputSchema": obj})
			}
			result = map[string]any{"tools": tools}
		}
		_ = out.Encode(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result})
	}
}
