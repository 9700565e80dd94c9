package rigout_test

//lint:file-ignore SA1019 mcp-go marks what protocol 2026-07-28 removed (the GET stream, ping, logging, sampling) deprecated; rigout still serves and tests 2025-11-25 clients, which use them.

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	mcptransport "github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/internal/gwtest"
	"github.com/rigout/rigout/redact"
)

// TestNotificationsMasked: a tool runs a command that prints the gateway's
// secret and the call's own (handed to the command in its environment),
// raw, in base64 and interleaved, and relays the output in progress and
// log notifications, as a relay of a long command's output does. With a
// progress token set, no notification carries a form of either value; the
// masks are there, and the progress token comes back as sent.
func TestNotificationsMasked(t *testing.T) {
	const gwSecret, callSecret = "gw-notify-secret-8d7c6b5a", "call-notify-secret-1a2b3c4d"
	var lines int // of the command's output, one progress notification each
	relay := rigout.Tool{
		Name: "relay", Description: "Relays a command's output as notifications.", Risk: rigout.ReadOnly,
		Handler: func(ctx context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
			if err := call.MaskSecrets(callSecret); err != nil {
				return nil, err
			}
			cmd := exec.CommandContext(ctx, "sh", "-c",
				`for v in "$G" "$C"; do printf '%s\n' "$v"; printf '%s' "$v" | base64; printf 'xx%s' "$v" | base64 -w0 | cut -c3-; echo; printf %s "$v" | sed 's/./&-/g'; echo; done`)
			cmd.Env = append(os.Environ(), "G="+gwSecret, "C="+callSecret)
			out, err := cmd.Output()
			if err != nil {
				return nil, err
			}
			all := strings.Split(strings.TrimSpace(string(out)), "\n")
			lines = len(all)
			for i, line := range all {
				if err := call.Progress(ctx, float64(i+1), 0, "output: "+line); err != nil {
					return nil, err
				}
			}
			if err := call.Log(ctx, mcp.LoggingLevelInfo, "relay", map[string]any{"output": string(out), "lines": strings.Split(string(out), "\n")}); err != nil {
				return nil, err
			}
			if err := call.Log(ctx, mcp.LoggingLevelInfo, "relay", string(out)); err != nil {
				return nil, err
			}
			return rigout.TextResult("relayed"), nil
		},
	}
	secrets, err := redact.New(gwSecret)
	if err != nil {
		t.Fatal(err)
	}
	gw := newGateway(t, rigout.Config{Tools: []rigout.Tool{relay}, Secrets: secrets})
	ctx := context.Background()
	c, err := client.NewStreamableHttpClient(serveHTTP(t, gw), mcptransport.WithContinuousListening())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var mu sync.Mutex
	var notes []mcp.JSONRPCNotification
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		mu.Lock()
		defer mu.Unlock()
		notes = append(notes, n)
	})
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = "2025-11-25"
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	if err := c.SetLevel(ctx, mcp.SetLevelRequest{Params: mcp.SetLevelParams{Level: mcp.LoggingLevelDebug}}); err != nil {
		t.Fatal(err)
	}
	var req mcp.CallToolRequest
	req.Params.Name = "relay"
	req.Params.Meta = &mcp.Meta{ProgressToken: "tok-42"}
	res, err := c.CallTool(ctx, req)
	if err != nil || res.IsError {
		t.Fatalf("call: %v %+v", err, res)
	}
	mu.Lock()
	defer mu.Unlock()
	var progress, logs, masks int
	forms := append(gwtest.SecretForms(gwSecret), gwtest.SecretForms(callSecret)...)
	for _, n := range notes {
		b, _ := json.Marshal(n)
		if f := gwtest.Leaked(string(b), forms); f != "" {
			t.Errorf("a %s notification holds %q: %s", n.Method, f, b)
		}
		masks += strings.Count(string(b), redact.Mask)
		switch n.Method {
		case string(mcp.MethodNotificationProgress):
			progress++
			if tok := n.Params.AdditionalFields["progressToken"]; tok != "tok-42" {
				t.Errorf("progress token %v, want tok-42", tok)
			}
		case "notifications/message":
			logs++
		}
	}
	// A line of progress each, each masked; 2 log messages, each masked
	// on every line.
	if lines < 8 || progress != lines || logs != 2 || masks < 3*lines {
		t.Fatalf("%d progress, %d log notifications, %d masks; want %d, 2, at least %d", progress, logs, masks, lines, 3*lines)
	}
}
