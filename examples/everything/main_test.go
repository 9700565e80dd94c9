package main

//lint:file-ignore SA1019 mcp-go marks what protocol 2026-07-28 removed (the GET stream, ping, logging, sampling) deprecated; rigout still serves and tests 2025-11-25 clients, which use them.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

const testToken = "everything-test-token"

// wantTools are the registry's rows.
var wantTools = []string{
	"greet", "slow_compute", "failing_job", "test_simple_text", "test_custom_headers", "test_image_content", "test_audio_content", "test_embedded_resource",
	"test_multiple_content_types", "test_tool_with_logging", "test_logging_tool", "test_tool_with_progress",
	"test_error_handling", "test_sampling", "test_elicitation", "test_elicitation_sep1034_defaults",
	"test_elicitation_sep1330_enums", "json_schema_2020_12_tool", "update_watched_resource",
}

// fakeUser answers sampling and elicitation requests the way the
// conformance suite does, and records what it was asked.
type fakeUser struct {
	mu      sync.Mutex
	sampled []string
	schemas []map[string]any
}

func (u *fakeUser) CreateMessage(_ context.Context, req mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(req.Messages) != 1 {
		return nil, fmt.Errorf("want one message, got %d", len(req.Messages))
	}
	tc, ok := req.Messages[0].Content.(mcp.TextContent)
	if !ok {
		return nil, fmt.Errorf("content %T", req.Messages[0].Content)
	}
	u.sampled = append(u.sampled, tc.Text)
	return &mcp.CreateMessageResult{
		SamplingMessage: mcp.SamplingMessage{Role: mcp.RoleAssistant, Content: mcp.NewTextContent("the model says hello")},
		Model:           "test-model",
		StopReason:      "endTurn",
	}, nil
}

func (u *fakeUser) Elicit(_ context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	b, err := json.Marshal(req.Params.RequestedSchema)
	if err != nil {
		return nil, err
	}
	var schema map[string]any
	if err := json.Unmarshal(b, &schema); err != nil {
		return nil, err
	}
	u.schemas = append(u.schemas, schema)
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{
		Action:  mcp.ElicitationResponseActionAccept,
		Content: map[string]any{"username": "testuser", "email": "test@example.com"},
	}}, nil
}

// notes collects the notifications a client receives.
type notes struct {
	mu  sync.Mutex
	all []mcp.JSONRPCNotification
}

func (n *notes) add(x mcp.JSONRPCNotification) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.all = append(n.all, x)
}

// wait returns the notifications with the given method once at least want
// of them arrived, or what arrived within the deadline.
func (n *notes) wait(method string, want int, within time.Duration) []mcp.JSONRPCNotification {
	deadline := time.Now().Add(within)
	for {
		n.mu.Lock()
		var got []mcp.JSONRPCNotification
		for _, x := range n.all {
			if x.Method == method {
				got = append(got, x)
			}
		}
		n.mu.Unlock()
		if len(got) >= want || time.Now().After(deadline) {
			return got
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (n *notes) reset() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.all = nil
}

// startHTTP serves the fixture on a loopback port until the test ends and
// returns the MCP endpoint's URL.
func startHTTP(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	var stderr bytes.Buffer
	getenv := func(k string) string {
		if k == "EVERYTHING_AUTH_TOKEN" {
			return testToken
		}
		return ""
	}
	go func() {
		done <- run(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), getenv, nil, io.Discard, &stderr, ready)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	select {
	case url := <-ready:
		return url
	case err := <-done:
		t.Fatalf("run ended early: %v\n%s", err, stderr.String())
	case <-time.After(10 * time.Second):
		t.Fatal("the fixture did not start")
	}
	return ""
}

// connect starts an MCP client on tr that speaks protocol 2025-11-25, as
// the conformance suite does, with sampling and elicitation handlers.
func connect(t *testing.T, tr transport.Interface, u *fakeUser, n *notes) *client.Client {
	t.Helper()
	c := client.NewClient(tr,
		client.WithProtocolVersion(mcp.ProtocolVersion20251125),
		client.WithSamplingHandler(u),
		client.WithElicitationHandler(u),
	)
	c.OnNotification(n.add)
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = mcp.ProtocolVersion20251125
	init.Params.ClientInfo = mcp.Implementation{Name: "everything-test", Version: "1"}
	res, err := c.Initialize(ctx, init)
	if err != nil {
		t.Fatal(err)
	}
	caps := res.Capabilities
	if caps.Tools == nil || caps.Resources == nil || !caps.Resources.Subscribe || caps.Prompts == nil ||
		caps.Logging == nil || caps.Completions == nil {
		t.Errorf("capabilities: %+v", caps)
	}
	return c
}

func TestHTTP(t *testing.T) {
	url := startHTTP(t)

	t.Run("auth", func(t *testing.T) {
		body := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
		for _, tt := range []struct {
			name   string
			header map[string]string
			want   int
		}{
			{"no token", nil, http.StatusUnauthorized},
			{"wrong token", map[string]string{"Authorization": "Bearer nope"}, http.StatusUnauthorized},
			{"rebound host", map[string]string{"Authorization": "Bearer " + testToken, "Host": "evil.example.com"}, http.StatusForbidden},
			{"foreign origin", map[string]string{"Authorization": "Bearer " + testToken, "Origin": "http://evil.example.com"}, http.StatusForbidden},
		} {
			req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range tt.header {
				if k == "Host" {
					req.Host = v
				} else {
					req.Header.Set(k, v)
				}
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Errorf("%s: status %d, want %d", tt.name, resp.StatusCode, tt.want)
			}
		}
	})

	tr, err := transport.NewStreamableHTTP(url,
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + testToken}),
		transport.WithContinuousListening(), // sampling requests arrive on the GET stream
	)
	if err != nil {
		t.Fatal(err)
	}
	u, n := &fakeUser{}, &notes{}
	c := connect(t, tr, u, n)
	// Every notification arrives before its result: the gateway writes
	// them on the call's own stream (docs/PROTOCOL.md, "Notification order").
	exercise(t, c, tr, u, n, 3)
	subscriptions(t, c, tr, n)
}

func TestStdio(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-stdio"}, func(string) string { return "" }, inR, outW, io.Discard, nil)
		outW.Close()
	}()
	t.Cleanup(func() {
		cancel()
		inW.Close()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	u, n := &fakeUser{}, &notes{}
	tr := transport.NewIO(outR, inW, nil)
	c := connect(t, tr, u, n)
	exercise(t, c, tr, u, n, 3)
}

// exercise calls every tool, resource and prompt. Of the notifications a
// tool sends, at least minNotes must arrive.
func exercise(t *testing.T, c *client.Client, tr transport.Interface, u *fakeUser, n *notes, minNotes int) {
	ctx := context.Background()
	call := func(t *testing.T, name string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		var req mcp.CallToolRequest
		req.Params.Name = name
		req.Params.Arguments = args
		res, err := c.CallTool(ctx, req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}
	text := func(res *mcp.CallToolResult) string {
		var parts []string
		for _, c := range res.Content {
			if tc, ok := c.(mcp.TextContent); ok {
				parts = append(parts, tc.Text)
			}
		}
		return strings.Join(parts, "\n")
	}

	t.Run("tools/list", func(t *testing.T) {
		res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
			if tool.Description == "" {
				t.Errorf("%s has no description", tool.Name)
			}
		}
		// The wire format keeps the 2020-12 keywords (mcp-go's client drops
		// $schema when it decodes a tool, so look at the raw result).
		raw, err := tr.SendRequest(ctx, transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId("raw-list"), Method: "tools/list"})
		if err != nil || raw.Error != nil {
			t.Fatalf("raw tools/list: %v %+v", err, raw)
		}
		for _, want := range []string{`"$schema":"https://json-schema.org/draft/2020-12/schema"`, `"$defs":{`, `"$ref":"#/$defs/address"`, `"$anchor":"addressDef"`, `"allOf":[`, `"if":{`, `"then":{`, `"else":{`} {
			if !bytes.Contains(raw.Result, []byte(want)) {
				t.Errorf("json_schema_2020_12_tool schema lacks %s", want)
			}
		}
		want := slices.Sorted(slices.Values(wantTools))
		if !slices.Equal(names, want) { // mcp-go lists tools by name
			t.Errorf("tools = %v, want %v", names, want)
		}
	})

	t.Run("content", func(t *testing.T) {
		if got := text(call(t, "test_simple_text", nil)); got != simpleText {
			t.Errorf("test_simple_text: %q", got)
		}
		if got := text(call(t, "test_custom_headers", map[string]any{"region": "eu-west"})); got != "region: eu-west" {
			t.Errorf("test_custom_headers: %q", got)
		}
		img, ok := call(t, "test_image_content", nil).Content[0].(mcp.ImageContent)
		if !ok || img.MIMEType != "image/png" || !strings.HasPrefix(img.Data, "iVBORw0KGgo") {
			t.Errorf("test_image_content: %+v", img)
		}
		audio, ok := call(t, "test_audio_content", nil).Content[0].(mcp.AudioContent)
		if !ok || audio.MIMEType != "audio/wav" || !strings.HasPrefix(audio.Data, "UklGR") {
			t.Errorf("test_audio_content: %+v", audio)
		}
		emb, ok := call(t, "test_embedded_resource", nil).Content[0].(mcp.EmbeddedResource)
		if tr, _ := emb.Resource.(mcp.TextResourceContents); !ok || tr.URI != uriEmbedded || tr.Text != embeddedText {
			t.Errorf("test_embedded_resource: %+v", emb)
		}
		var kinds []string
		for _, x := range call(t, "test_multiple_content_types", nil).Content {
			kinds = append(kinds, fmt.Sprintf("%T", x))
		}
		if got := strings.Join(kinds, ","); got != "mcp.TextContent,mcp.ImageContent,mcp.EmbeddedResource" {
			t.Errorf("test_multiple_content_types: %s", got)
		}
		if res := call(t, "test_error_handling", nil); !res.IsError || text(res) != errorText {
			t.Errorf("test_error_handling: %+v", res)
		}
	})

	t.Run("schema", func(t *testing.T) {
		args := map[string]any{"name": "Ada", "address": map[string]any{"street": "1 Main St", "city": "London"}, "email": "ada@example.com"}
		if res := call(t, "json_schema_2020_12_tool", args); res.IsError || !strings.Contains(text(res), "London") {
			t.Errorf("valid arguments: %+v", res)
		}
		res := call(t, "json_schema_2020_12_tool", map[string]any{"address": map[string]any{"city": 7}, "extra": true})
		if res := call(t, "json_schema_2020_12_tool", map[string]any{"contactMethod": "phone", "email": "ada@example.com"}); !res.IsError || !strings.Contains(text(res), "phone") {
			t.Errorf("if/then (contactMethod phone without phone): %s", text(res))
		}
		if !res.IsError || !strings.Contains(text(res), "extra") || !strings.Contains(text(res), "city") {
			t.Errorf("invalid arguments: %s", text(res))
		}
		if res := call(t, "test_sampling", nil); !res.IsError || !strings.Contains(text(res), "prompt") {
			t.Errorf("missing required argument: %s", text(res))
		}
	})

	t.Run("sampling", func(t *testing.T) {
		res := call(t, "test_sampling", map[string]any{"prompt": "Say hello"})
		if res.IsError || text(res) != "LLM response: the model says hello" {
			t.Errorf("test_sampling: %s", text(res))
		}
		u.mu.Lock()
		defer u.mu.Unlock()
		if !slices.Equal(u.sampled, []string{"Say hello"}) {
			t.Errorf("sampled %q", u.sampled)
		}
	})

	t.Run("elicitation", func(t *testing.T) {
		res := call(t, "test_elicitation", map[string]any{"message": "Who are you?"})
		if res.IsError || !strings.Contains(text(res), `action=accept`) || !strings.Contains(text(res), "test@example.com") {
			t.Errorf("test_elicitation: %s", text(res))
		}
		for _, name := range []string{"test_elicitation_sep1034_defaults", "test_elicitation_sep1330_enums"} {
			if res := call(t, name, nil); res.IsError || !strings.HasPrefix(text(res), "Elicitation completed: action=accept") {
				t.Errorf("%s: %s", name, text(res))
			}
		}
		u.mu.Lock()
		defer u.mu.Unlock()
		if len(u.schemas) != 3 {
			t.Fatalf("%d elicitations", len(u.schemas))
		}
		props := func(i int, name string) map[string]any {
			p, _ := u.schemas[i]["properties"].(map[string]any)
			m, _ := p[name].(map[string]any)
			return m
		}
		for name, want := range map[string]any{"name": "John Doe", "age": 30.0, "score": 95.5, "status": "active", "verified": true} {
			if got := props(1, name)["default"]; got != want {
				t.Errorf("SEP-1034 %s default = %v, want %v", name, got, want)
			}
		}
		if props(2, "titledSingle")["oneOf"] == nil || props(2, "legacyEnum")["enumNames"] == nil ||
			props(2, "titledMulti")["items"].(map[string]any)["anyOf"] == nil {
			t.Errorf("SEP-1330 schema: %v", u.schemas[2])
		}
	})

	t.Run("logging", func(t *testing.T) {
		n.reset()
		if err := c.SetLevel(ctx, mcp.SetLevelRequest{Params: mcp.SetLevelParams{Level: mcp.LoggingLevelDebug}}); err != nil {
			t.Fatal(err)
		}
		call(t, "test_tool_with_logging", nil)
		got := n.wait(string(mcp.MethodNotificationMessage), 3, 2*time.Second)
		if len(got) < minNotes {
			t.Fatalf("%d log notifications, want %d", len(got), minNotes)
		}
		if d := got[0].Params.AdditionalFields["data"]; d != "Tool execution started" {
			t.Errorf("first log message %v", d)
		}
		// Above the session's level, nothing is sent.
		n.reset()
		if err := c.SetLevel(ctx, mcp.SetLevelRequest{Params: mcp.SetLevelParams{Level: mcp.LoggingLevelError}}); err != nil {
			t.Fatal(err)
		}
		call(t, "test_tool_with_logging", nil)
		if got := n.wait(string(mcp.MethodNotificationMessage), 1, 200*time.Millisecond); len(got) != 0 {
			t.Errorf("%d log notifications above the level", len(got))
		}
	})

	t.Run("progress", func(t *testing.T) {
		n.reset()
		var req mcp.CallToolRequest
		req.Params.Name = "test_tool_with_progress"
		req.Params.Meta = &mcp.Meta{ProgressToken: "p-1"}
		if _, err := c.CallTool(ctx, req); err != nil {
			t.Fatal(err)
		}
		got := n.wait(string(mcp.MethodNotificationProgress), 3, 2*time.Second)
		if len(got) < minNotes {
			t.Fatalf("%d progress notifications, want %d", len(got), minNotes)
		}
		for i, x := range got {
			if x.Params.AdditionalFields["progressToken"] != "p-1" || x.Params.AdditionalFields["progress"] != float64(50*i) {
				t.Errorf("progress %d: %v", i, x.Params.AdditionalFields)
			}
		}
		n.reset()
		if res := call(t, "test_tool_with_progress", nil); res.IsError || !strings.Contains(text(res), "no progress token") {
			t.Errorf("without a token: %s", text(res))
		}
		if got := n.wait(string(mcp.MethodNotificationProgress), 1, 200*time.Millisecond); len(got) != 0 {
			t.Errorf("%d progress notifications without a token", len(got))
		}
	})

	t.Run("resources", func(t *testing.T) {
		list, err := c.ListResources(ctx, mcp.ListResourcesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var uris []string
		for _, r := range list.Resources {
			uris = append(uris, r.URI)
			if r.Description == "" || r.MIMEType == "" {
				t.Errorf("%s: %+v", r.URI, r)
			}
		}
		slices.Sort(uris)
		if got := strings.Join(uris, ","); got != "test://static-binary,test://static-text,test://watched-resource" {
			t.Errorf("resources: %s", got)
		}
		tmpl, err := c.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{})
		if err != nil || len(tmpl.ResourceTemplates) != 1 || tmpl.ResourceTemplates[0].URITemplate.Raw() != uriTemplate {
			t.Errorf("templates: %v %+v", err, tmpl)
		}
		read := func(uri string) mcp.ResourceContents {
			res, err := c.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: uri}})
			if err != nil || len(res.Contents) != 1 {
				t.Fatalf("read %s: %v %+v", uri, err, res)
			}
			return res.Contents[0]
		}
		if r, ok := read(uriStaticText).(mcp.TextResourceContents); !ok || r.Text != staticText || r.MIMEType != "text/plain" {
			t.Errorf("static text: %+v", r)
		}
		if r, ok := read(uriStaticBinary).(mcp.BlobResourceContents); !ok || r.MIMEType != "image/png" || r.Blob == "" {
			t.Errorf("static binary: %+v", r)
		}
		r, ok := read("test://template/123/data").(mcp.TextResourceContents)
		if !ok || r.URI != "test://template/123/data" || r.Text != `{"data":"Data for ID: 123","id":"123","templateTest":true}` {
			t.Errorf("template: %+v", r)
		}
		if _, err := c.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: "test://nowhere"}}); err == nil {
			t.Error("reading an unknown resource succeeded")
		}
	})

	t.Run("prompts", func(t *testing.T) {
		list, err := c.ListPrompts(ctx, mcp.ListPromptsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, p := range list.Prompts {
			names = append(names, p.Name)
			if p.Description == "" {
				t.Errorf("%s has no description", p.Name)
			}
		}
		slices.Sort(names)
		if got := strings.Join(names, ","); got != "test_prompt_with_arguments,test_prompt_with_embedded_resource,test_prompt_with_image,test_simple_prompt" {
			t.Errorf("prompts: %s", got)
		}
		get := func(name string, args map[string]string) []mcp.PromptMessage {
			res, err := c.GetPrompt(ctx, mcp.GetPromptRequest{Params: mcp.GetPromptParams{Name: name, Arguments: args}})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return res.Messages
		}
		if m := get("test_simple_prompt", nil); len(m) != 1 || m[0].Content.(mcp.TextContent).Text != promptText {
			t.Errorf("test_simple_prompt: %+v", m)
		}
		if m := get("test_prompt_with_arguments", map[string]string{"arg1": "hello", "arg2": "world"}); len(m) != 1 ||
			m[0].Content.(mcp.TextContent).Text != "Prompt with arguments: arg1='hello', arg2='world'" {
			t.Errorf("test_prompt_with_arguments: %+v", m)
		}
		m := get("test_prompt_with_embedded_resource", map[string]string{"resourceUri": "test://example-resource"})
		if emb, ok := m[0].Content.(mcp.EmbeddedResource); !ok || emb.Resource.(mcp.TextResourceContents).URI != "test://example-resource" {
			t.Errorf("test_prompt_with_embedded_resource: %+v", m)
		}
		if m := get("test_prompt_with_image", nil); len(m) != 2 || m[0].Content.(mcp.ImageContent).MIMEType != "image/png" {
			t.Errorf("test_prompt_with_image: %+v", m)
		}
		if _, err := c.GetPrompt(ctx, mcp.GetPromptRequest{Params: mcp.GetPromptParams{Name: "test_prompt_with_arguments"}}); err == nil {
			t.Error("a prompt without its required arguments succeeded")
		}
	})

	t.Run("completion", func(t *testing.T) {
		complete := func(ref any, arg, value string) []string {
			res, err := c.Complete(ctx, mcp.CompleteRequest{Params: mcp.CompleteParams{
				Ref: ref, Argument: mcp.CompleteArgument{Name: arg, Value: value},
			}})
			if err != nil {
				t.Fatal(err)
			}
			return res.Completion.Values
		}
		if got := complete(mcp.PromptReference{Type: "ref/prompt", Name: "test_prompt_with_arguments"}, "arg1", "par"); !slices.Equal(got, []string{"paris", "park", "party"}) {
			t.Errorf("prompt completion: %v", got)
		}
		if got := complete(mcp.ResourceReference{Type: "ref/resource", URI: uriTemplate}, "id", "1"); !slices.Equal(got, []string{"1", "123"}) {
			t.Errorf("template completion: %v", got)
		}
	})
}

// subscriptions subscribes to the watched resource, changes it, and checks
// the update notification; then unsubscribes.
func subscriptions(t *testing.T, c *client.Client, tr transport.Interface, n *notes) {
	ctx := context.Background()
	rpc := func(method string) {
		t.Helper()
		res, err := tr.SendRequest(ctx, transport.JSONRPCRequest{
			JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(method), Method: method,
			Params: map[string]any{"uri": uriWatched},
		})
		if err != nil || res.Error != nil {
			t.Fatalf("%s: %v %+v", method, err, res)
		}
	}
	update := func() string {
		var req mcp.CallToolRequest
		req.Params.Name = "update_watched_resource"
		res, err := c.CallTool(ctx, req)
		if err != nil || res.IsError {
			t.Fatalf("update_watched_resource: %v %+v", err, res)
		}
		return res.Content[0].(mcp.TextContent).Text
	}
	n.reset()
	rpc(string(mcp.MethodResourcesSubscribe))
	if got := update(); !strings.HasSuffix(got, "1 subscribed session(s) notified") {
		t.Errorf("after subscribe: %s", got)
	}
	got := n.wait(mcp.MethodNotificationResourceUpdated, 1, 2*time.Second)
	if len(got) != 1 || got[0].Params.AdditionalFields["uri"] != uriWatched {
		t.Errorf("updates: %+v", got)
	}
	rpc(string(mcp.MethodResourcesUnsubscribe))
	if got := update(); !strings.HasSuffix(got, "0 subscribed session(s) notified") {
		t.Errorf("after unsubscribe: %s", got)
	}
}
