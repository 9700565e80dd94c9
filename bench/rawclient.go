package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	osexec "os/exec"
	"strings"
	"time"
)

// rawClient speaks just enough MCP to call tools: one JSON-RPC request, one
// response, protocol 2025-11-25. mcp-go's Go clients cost a few hundred
// microseconds per call by themselves (its stdio client: about 0.35 ms),
// which a latency comparison would charge to rigout; this client costs
// about what the pipe or the HTTP request does.
type rawClient interface {
	callTool(ctx context.Context, name string, args map[string]any) (time.Duration, error)
	Close() error
}

// rpcResponse is a JSON-RPC response to a tools/call.
type rpcResponse struct {
	Error  *struct{ Message string } `json:"error"`
	Result struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"result"`
}

// check turns a response into an error when it is one.
func (r *rpcResponse) check(name string) error {
	if r.Error != nil {
		return fmt.Errorf("tools/call %s: %s", name, r.Error.Message)
	}
	if r.Result.IsError {
		text := ""
		if len(r.Result.Content) > 0 {
			text = r.Result.Content[0].Text
		}
		return fmt.Errorf("tools/call %s: error result: %.300s", name, text)
	}
	return nil
}

func rpcLine(id int, method string, params any) ([]byte, error) {
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if id > 0 {
		m["id"] = id
	}
	if params != nil {
		m["params"] = params
	}
	return json.Marshal(m)
}

var initParams = map[string]any{
	"protocolVersion": "2025-11-25",
	"capabilities":    map[string]any{},
	"clientInfo":      map[string]any{"name": "rigout-bench-raw", "version": "1"},
}

// rawStdio drives `rigout stdio` through its pipes.
type rawStdio struct {
	cmd *osexec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	id  int
}

// rawStdioClient starts `rigout stdio` with the given state directory and
// initializes it.
func (b *bench) rawStdioClient(ctx context.Context, state string, extra ...string) (*rawStdio, error) {
	return b.rawStdioClientOf(ctx, b.rigout, state, extra...)
}

// rawStdioClientOf is rawStdioClient for another rigout binary.
func (b *bench) rawStdioClientOf(ctx context.Context, bin, state string, extra ...string) (*rawStdio, error) {
	cmd := osexec.CommandContext(ctx, bin, append([]string{"stdio", "--log-level", "warn", "--workdir", b.tmp}, extra...)...)
	cmd.Env = baseEnv("RIGOUT_STATE_DIR=" + state)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &rawStdio{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}
	if _, err := c.roundTrip("initialize", initParams); err != nil {
		c.Close()
		return nil, fmt.Errorf("initialize: %w", err)
	}
	note, _ := rpcLine(0, "notifications/initialized", nil)
	if _, err := c.in.Write(append(note, '\n')); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (c *rawStdio) roundTrip(method string, params any) ([]byte, error) {
	c.id++
	line, err := rpcLine(c.id, method, params)
	if err != nil {
		return nil, err
	}
	if _, err := c.in.Write(append(line, '\n')); err != nil {
		return nil, err
	}
	for {
		resp, err := c.out.ReadBytes('\n')
		if err != nil {
			return nil, err
		}
		// Skip notifications: a response carries the request's id.
		if bytes.Contains(resp, []byte(`"id":`)) {
			return resp, nil
		}
	}
}

func (c *rawStdio) callTool(ctx context.Context, name string, args map[string]any) (time.Duration, error) {
	start := time.Now()
	resp, err := c.roundTrip("tools/call", map[string]any{"name": name, "arguments": args})
	d := time.Since(start)
	if err != nil {
		return d, err
	}
	var r rpcResponse
	if err := json.Unmarshal(resp, &r); err != nil {
		return d, fmt.Errorf("tools/call %s: %w", name, err)
	}
	return d, r.check(name)
}

// Close ends the process: closing stdin ends rigout stdio.
func (c *rawStdio) Close() error {
	c.in.Close()
	return c.cmd.Wait()
}

// rawHTTP drives `rigout serve` with plain HTTP requests on one keep-alive
// connection.
type rawHTTP struct {
	url, token, session string
	hc                  *http.Client
	id                  int
}

// rawHTTPClient initializes a protocol session with `rigout serve`.
func rawHTTPClient(ctx context.Context, url, token string) (*rawHTTP, error) {
	c := &rawHTTP{url: url, token: token, hc: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2}}}
	if _, err := c.post(ctx, 1, "initialize", initParams); err != nil {
		return nil, fmt.Errorf("initialize: %w", err)
	}
	if _, err := c.post(ctx, 0, "notifications/initialized", nil); err != nil {
		return nil, fmt.Errorf("initialized: %w", err)
	}
	return c, nil
}

// post sends one message and returns the JSON-RPC response, from a JSON
// body or the SSE stream of the reply.
func (c *rawHTTP) post(ctx context.Context, id int, method string, params any) ([]byte, error) {
	body, err := rpcLine(id, method, params)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if method != "initialize" {
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
		c.session = s
	}
	if id == 0 {
		if resp.StatusCode/100 != 2 {
			return nil, fmt.Errorf("%s: HTTP %d", method, resp.StatusCode)
		}
		return nil, nil
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: HTTP %d: %.200s", method, resp.StatusCode, data)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		// The response is the data line that carries an id.
		for _, line := range strings.Split(string(data), "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok && strings.Contains(d, `"id":`) {
				return []byte(d), nil
			}
		}
		return nil, errors.New(method + ": no response in the event stream")
	}
	return data, nil
}

func (c *rawHTTP) callTool(ctx context.Context, name string, args map[string]any) (time.Duration, error) {
	c.id++
	start := time.Now()
	resp, err := c.post(ctx, c.id+1, "tools/call", map[string]any{"name": name, "arguments": args})
	d := time.Since(start)
	if err != nil {
		return d, err
	}
	var r rpcResponse
	if err := json.Unmarshal(resp, &r); err != nil {
		return d, fmt.Errorf("tools/call %s: %w", name, err)
	}
	return d, r.check(name)
}

// Close releases the client's connections.
func (c *rawHTTP) Close() error {
	c.hc.CloseIdleConnections()
	return nil
}
