package rigout_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/transport"
)

// chattyTool reports progress three times from the handler and once from
// a goroutine it waits for, then logs, then returns at once: the
// notifications are sent right before the result.
func chattyTool() rigout.Tool {
	return rigout.Tool{
		Name: "chatty", Description: "Reports progress, then returns at once.", Risk: rigout.ReadOnly,
		Handler: func(ctx context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
			for i := 1; i <= 3; i++ {
				if err := call.Progress(ctx, float64(i), 4, "step"); err != nil {
					return nil, err
				}
			}
			errc := make(chan error, 1)
			go func() { errc <- call.Progress(ctx, 4, 4, "last step") }()
			if err := <-errc; err != nil {
				return nil, err
			}
			if err := call.Log(ctx, mcp.LoggingLevelInfo, "chatty", "done"); err != nil {
				return nil, err
			}
			return rigout.TextResult("ok"), nil
		},
	}
}

// wantOnStream is what a call of chattyTool with progress token tok must
// put on its own stream, in this order: then nothing.
func wantOnStream(tok int) []string {
	return []string{
		fmt.Sprintf("progress %d 1", tok), fmt.Sprintf("progress %d 2", tok),
		fmt.Sprintf("progress %d 3", tok), fmt.Sprintf("progress %d 4", tok),
		"log info done", fmt.Sprintf("result %d ok", tok),
	}
}

// describe names a JSON-RPC message for the comparison.
func describe(t *testing.T, raw []byte) string {
	t.Helper()
	var m struct {
		ID     *int           `json:"id"`
		Method string         `json:"method"`
		Params map[string]any `json:"params"`
		Result *struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
		Error any `json:"error"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("not a JSON-RPC message: %q", raw)
	}
	switch {
	case m.Method == "notifications/progress":
		return fmt.Sprintf("progress %v %v", m.Params["progressToken"], m.Params["progress"])
	case m.Method == "notifications/message":
		return fmt.Sprintf("log %v %v", m.Params["level"], m.Params["data"])
	case m.ID != nil && m.Result != nil && len(m.Result.Content) > 0:
		return fmt.Sprintf("result %d %s", *m.ID, m.Result.Content[0].Text)
	case m.ID != nil:
		return fmt.Sprintf("answer %d %s", *m.ID, raw)
	}
	return m.Method
}

// sseMessages returns the data of every event of an SSE body, or the body
// itself when it is JSON.
func sseMessages(t *testing.T, resp *http.Response) [][]byte {
	t.Helper()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return [][]byte{body}
	}
	var msgs [][]byte
	for _, line := range bytes.Split(body, []byte("\n")) {
		if data, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			msgs = append(msgs, data)
		}
	}
	return msgs
}

// TestNotificationsOnTheCallsOwnStream: every notification a tool sends
// while it runs is on the same response stream as its result, ahead of
// it, in the order sent, and nothing follows the result: over streamable
// HTTP at 2025-11-25 (stateful, with the client's GET stream open, and
// stateless) and at 2026-07-28, and over stdio. The check reads the wire,
// so a notification that went to another stream fails it as surely as
// one written late; no timer is involved.
func TestNotificationsOnTheCallsOwnStream(t *testing.T) {
	const rounds = 20
	tests := []struct {
		name      string
		stateless bool
		modern    bool
	}{
		{name: "2025-11-25 stateful, GET stream open"},
		{name: "2025-11-25 stateless", stateless: true},
		{name: "2026-07-28", modern: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gw := newGateway(t, rigout.Config{Tools: []rigout.Tool{chattyTool()}})
			h, err := transport.NewHTTP(gw.MCPServer(), transport.HTTPConfig{InsecureNoAuth: true, Stateless: tt.stateless})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { h.Close() })
			ts := httptest.NewServer(h.Handler())
			t.Cleanup(ts.Close)
			url := ts.URL + "/mcp"

			session := ""
			post := func(id int, method string, params map[string]any) *http.Response {
				t.Helper()
				msg := map[string]any{"jsonrpc": "2.0", "method": method, "params": params}
				if id != 0 {
					msg["id"] = id
				}
				body, _ := json.Marshal(msg)
				req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				if tt.modern {
					req.Header.Set(mcp.HeaderProtocolVersion, mcp.ProtocolVersion20260728)
					req.Header.Set(mcp.HeaderMethod, method)
					if name, ok := params["name"].(string); ok {
						req.Header.Set(mcp.HeaderName, name)
					}
				} else if method != "initialize" {
					req.Header.Set(mcp.HeaderProtocolVersion, "2025-11-25")
				}
				if session != "" {
					req.Header.Set("Mcp-Session-Id", session)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				return resp
			}
			if !tt.modern {
				resp := post(1, "initialize", map[string]any{
					"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
					"clientInfo": map[string]any{"name": "order-test", "version": "1"},
				})
				session = resp.Header.Get("Mcp-Session-Id")
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || (session == "") != tt.stateless {
					t.Fatalf("initialize: HTTP %d, session %q", resp.StatusCode, session)
				}
				post(0, "notifications/initialized", map[string]any{}).Body.Close()
				post(2, "logging/setLevel", map[string]any{"level": "debug"}).Body.Close()
			}
			if session != "" {
				// The standalone GET stream competes for the session's
				// notifications: it must receive none of the calls'.
				req, _ := http.NewRequest(http.MethodGet, url, nil)
				req.Header.Set("Accept", "text/event-stream")
				req.Header.Set("Mcp-Session-Id", session)
				req.Header.Set(mcp.HeaderProtocolVersion, "2025-11-25")
				resp, err := http.DefaultClient.Do(req)
				if err != nil || resp.StatusCode != http.StatusOK {
					t.Fatalf("GET stream: %v %v", err, resp)
				}
				var wg sync.WaitGroup
				wg.Add(1)
				go func() {
					defer wg.Done()
					sc := bufio.NewScanner(resp.Body)
					for sc.Scan() {
						if strings.Contains(sc.Text(), "notifications/progress") || strings.Contains(sc.Text(), "notifications/message") {
							t.Errorf("a call's notification left on the GET stream: %s", sc.Text())
						}
					}
				}()
				t.Cleanup(func() { resp.Body.Close(); wg.Wait() })
			}
			for i := 10; i < 10+rounds; i++ {
				params := map[string]any{"name": "chatty", "arguments": map[string]any{}}
				meta := map[string]any{"progressToken": i}
				if tt.modern {
					meta[mcp.MetaKeyProtocolVersion] = mcp.ProtocolVersion20260728
					meta[mcp.MetaKeyClientInfo] = map[string]any{"name": "order-test", "version": "1"}
					meta[mcp.MetaKeyClientCapabilities] = map[string]any{}
					meta[mcp.MetaKeyLogLevel] = "debug"
				}
				params["_meta"] = meta
				resp := post(i, "tools/call", params)
				var got []string
				for _, m := range sseMessages(t, resp) {
					got = append(got, describe(t, m))
				}
				resp.Body.Close()
				if want := wantOnStream(i); strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Fatalf("round %d: the call's stream carried\n%s\nwant\n%s", i, strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
			}
		})
	}
}

// TestNotificationsBeforeTheResultOverStdio: over stdio every
// notification a call sent is written before its result, in order.
func TestNotificationsBeforeTheResultOverStdio(t *testing.T) {
	gw := newGateway(t, rigout.Config{Tools: []rigout.Tool{chattyTool()}})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- transport.ServeStdio(ctx, gw.MCPServer(), inR, outW, transport.StdioConfig{})
		outW.Close()
	}()
	t.Cleanup(func() {
		cancel()
		inW.Close()
		outR.Close() // a write still pending must not hold ServeStdio
		if err := <-done; err != nil {
			t.Errorf("ServeStdio: %v", err)
		}
	})
	out := bufio.NewScanner(outR)
	out.Buffer(make([]byte, 64<<10), 1<<20)
	send := func(id int, method string, params map[string]any) {
		t.Helper()
		msg := map[string]any{"jsonrpc": "2.0", "method": method, "params": params}
		if id != 0 {
			msg["id"] = id
		}
		b, _ := json.Marshal(msg)
		if _, err := inW.Write(append(b, '\n')); err != nil {
			t.Fatal(err)
		}
	}
	// upTo returns the messages written up to and including the answer to id.
	upTo := func(id int) []string {
		t.Helper()
		var got []string
		for out.Scan() {
			d := describe(t, out.Bytes())
			got = append(got, d)
			if strings.HasPrefix(d, fmt.Sprintf("result %d ", id)) || strings.HasPrefix(d, fmt.Sprintf("answer %d ", id)) {
				return got
			}
		}
		t.Fatalf("stdio output ended before the answer to %d: %v (%v)", id, got, out.Err())
		return nil
	}
	send(1, "initialize", map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "order-test", "version": "1"},
	})
	upTo(1)
	send(0, "notifications/initialized", map[string]any{})
	send(2, "logging/setLevel", map[string]any{"level": "debug"})
	upTo(2)
	for i := 10; i < 30; i++ {
		send(i, "tools/call", map[string]any{"name": "chatty", "arguments": map[string]any{}, "_meta": map[string]any{"progressToken": i}})
		if got, want := upTo(i), wantOnStream(i); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("round %d: stdio carried\n%s\nwant\n%s", i, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}
