package main

//lint:file-ignore SA1019 mcp-go marks what protocol 2026-07-28 removed (the GET stream, ping, logging, sampling) deprecated; rigout still serves and tests 2025-11-25 clients, which use them.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/rigout/rigout"
)

// The texts the conformance scenarios look for.
const (
	simpleText        = "This is a simple text response for testing."
	errorText         = "This tool intentionally returns an error for testing"
	staticText        = "This is the content of the static text resource."
	embeddedText      = "This is an embedded resource content."
	promptText        = "This is a simple prompt for testing."
	promptResourceTxt = "Embedded resource content for testing."
)

// Resource URIs.
const (
	uriStaticText     = "test://static-text"
	uriStaticBinary   = "test://static-binary"
	uriWatched        = "test://watched-resource"
	uriTemplate       = "test://template/{id}/data"
	uriEmbedded       = "test://embedded-resource"
	uriMixed          = "test://mixed-content-resource"
	uriTemplatePrefix = "test://template/"
)

// step is the pause between the notifications of the logging and progress
// tools, as the scenarios ask.
const step = 50 * time.Millisecond

// fixture is the conformance server's state: the gateway it is built on and
// which protocol sessions subscribed to which resources. A fixture is safe
// for concurrent use.
type fixture struct {
	gw  *rigout.Gateway
	srv *server.MCPServer
	log *slog.Logger
	png string // base64 of a 1x1 red PNG
	wav string // base64 of a short silent WAV

	// mu protects the following.
	mu      sync.Mutex
	subs    map[string]map[string]bool // session ID → subscribed URIs
	watched int                        // revision of test://watched-resource
}

// newFixture builds a gateway with no tool family and registers every
// conformance fixture on it: tools through the gateway's registry,
// resources, templates, prompts and completions on its mcp-go server.
// Middleware, if any, wraps every tool call inside the gateway's chain.
func newFixture(logger *slog.Logger, middleware ...rigout.Middleware) (*fixture, error) {
	png, err := redPixelPNG()
	if err != nil {
		return nil, err
	}
	f := &fixture{
		log:  logger,
		png:  png,
		wav:  silentWAV(),
		subs: make(map[string]map[string]bool),
	}
	gw, err := rigout.New(rigout.Config{
		Name:         "rigout-everything",
		Instructions: "Conformance fixtures for the MCP test suite, served by rigout.",
		Logger:       logger,
		TaskAfter:    200 * time.Millisecond,
		Middleware:   middleware,
		MCPOptions: []server.ServerOption{
			server.WithResourceCapabilities(true, true),
			server.WithPromptCapabilities(true),
			server.WithCompletions(),
			server.WithElicitation(),
			server.WithPromptCompletionProvider(completer{}),
			server.WithResourceCompletionProvider(completer{}),
		},
	})
	if err != nil {
		return nil, err
	}
	f.gw = gw
	f.srv = gw.MCPServer()
	for _, t := range f.tools() {
		if err := gw.Register(t); err != nil {
			gw.Close()
			return nil, err
		}
	}
	f.addResources()
	f.addPrompts()
	// The gateway owns the server's hooks (audit of unknown tools); add to
	// them rather than replacing them with server.WithHooks.
	hooks := f.srv.GetHooks()
	if hooks == nil {
		gw.Close()
		return nil, errors.New("the gateway's mcp-go server has no hooks to add subscription tracking to")
	}
	hooks.AddAfterSubscribe(func(ctx context.Context, _ any, req *mcp.SubscribeRequest, _ *mcp.EmptyResult) {
		f.subscribe(ctx, req.Params.URI, true)
	})
	hooks.AddAfterUnsubscribe(func(ctx context.Context, _ any, req *mcp.UnsubscribeRequest, _ *mcp.EmptyResult) {
		f.subscribe(ctx, req.Params.URI, false)
	})
	hooks.AddOnUnregisterSession(func(_ context.Context, s server.ClientSession) {
		f.mu.Lock()
		delete(f.subs, s.SessionID())
		f.mu.Unlock()
	})
	return f, nil
}

// Close closes the gateway.
func (f *fixture) Close() error { return f.gw.Close() }

// noArgs is the input schema of the tools that take no arguments.
var noArgs = json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)

// tools returns the registry rows, in tools/list order.
func (f *fixture) tools() []rigout.Tool {
	return []rigout.Tool{
		{
			Name:        "test_simple_text",
			Description: "Returns one text block.",
			Risk:        rigout.ReadOnly, InputSchema: noArgs,
			Handler: func(context.Context, *rigout.Call) (*mcp.CallToolResult, error) {
				return rigout.TextResult(simpleText), nil
			},
		},
		{
			// SEP-2243 (2026-07-28): a parameter annotated x-mcp-header also
			// travels in the Mcp-Param-Region header; mcp-go checks that
			// the two agree (and decodes =?base64?…?= values) before the
			// call runs.
			Name:        "test_custom_headers",
			Description: "Echoes its region argument, which clients also send in the Mcp-Param-Region header.",
			Risk:        rigout.ReadOnly,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}},"required":["region"],"additionalProperties":false}`),
			Handler: func(_ context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
				region, _ := call.Args["region"].(string)
				return rigout.TextResult("region: " + region), nil
			},
		},
		{
			Name:        "greet",
			Description: "Says hello (the tasks-extension scenarios' sync tool).",
			Risk:        rigout.ReadOnly,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"],"additionalProperties":false}`),
			Handler: func(_ context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
				name, _ := call.Args["name"].(string)
				return rigout.TextResult("Hello, " + name + "!"), nil
			},
		},
		{
			Name:        "slow_compute",
			Description: "Sleeps seconds seconds, then answers (a task when it outlasts the gateway's TaskAfter).",
			Risk:        rigout.ReadOnly, Tasks: true,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"seconds":{"type":"number","minimum":0},"label":{"type":"string"}},"additionalProperties":false}`),
			Handler: func(ctx context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
				seconds, _ := call.Args["seconds"].(float64)
				label, _ := call.Args["label"].(string)
				select {
				case <-time.After(time.Duration(seconds * float64(time.Second))):
					return rigout.TextResult(fmt.Sprintf("computed %s after %gs", label, seconds)), nil
				case <-ctx.Done():
					return rigout.ErrorResult("cancelled"), nil
				}
			},
		},
		{
			Name:        "failing_job",
			Description: "Runs half a second as a task, then reports a tool execution error.",
			Risk:        rigout.ReadOnly, Tasks: true, InputSchema: noArgs,
			Handler: func(ctx context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
				select {
				case <-time.After(500 * time.Millisecond):
					return rigout.ErrorResult("the job failed"), nil
				case <-ctx.Done():
					return rigout.ErrorResult("cancelled"), nil
				}
			},
		},
		{
			Name:        "test_image_content",
			Description: "Returns a 1x1 red PNG image.",
			Risk:        rigout.ReadOnly, InputSchema: noArgs,
			Handler: func(context.Context, *rigout.Call) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewImageContent(f.png, "image/png")}}, nil
			},
		},
		{
			Name:        "test_audio_content",
			Description: "Returns a short silent WAV clip.",
			Risk:        rigout.ReadOnly, InputSchema: noArgs,
			Handler: func(context.Context, *rigout.Call) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewAudioContent(f.wav, "audio/wav")}}, nil
			},
		},
		{
			Name:        "test_embedded_resource",
			Description: "Returns an embedded text resource.",
			Risk:        rigout.ReadOnly, InputSchema: noArgs,
			Handler: func(context.Context, *rigout.Call) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewEmbeddedResource(mcp.TextResourceContents{
					URI: uriEmbedded, MIMEType: "text/plain", Text: embeddedText,
				})}}, nil
			},
		},
		{
			Name:        "test_multiple_content_types",
			Description: "Returns text, an image and an embedded JSON resource.",
			Risk:        rigout.ReadOnly, InputSchema: noArgs,
			Handler: func(context.Context, *rigout.Call) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{
					mcp.NewTextContent("Multiple content types test:"),
					mcp.NewImageContent(f.png, "image/png"),
					mcp.NewEmbeddedResource(mcp.TextResourceContents{
						URI: uriMixed, MIMEType: "application/json", Text: `{"test":"data","value":123}`,
					}),
				}}, nil
			},
		},
		{
			Name:        "test_tool_with_logging",
			Description: "Sends three info log notifications, 50 ms apart, then returns.",
			Risk:        rigout.ReadOnly, InputSchema: noArgs,
			Handler: f.withLogging,
		},
		{
			// server-stateless (2026-07-28) calls it without a logLevel in
			// _meta and checks that no notifications/message comes back.
			Name:        "test_logging_tool",
			Description: "Like test_tool_with_logging: sends three info log notifications, 50 ms apart, then returns.",
			Risk:        rigout.ReadOnly, InputSchema: noArgs,
			Handler: f.withLogging,
		},
		{
			Name:        "test_tool_with_progress",
			Description: "Reports progress 0, 50 and 100 of 100, 50 ms apart, when the call carries a progress token.",
			Risk:        rigout.ReadOnly, InputSchema: noArgs,
			Handler: f.withProgress,
		},
		{
			Name:        "test_error_handling",
			Description: "Always fails with an error result.",
			Risk:        rigout.ReadOnly, InputSchema: noArgs,
			Handler: func(context.Context, *rigout.Call) (*mcp.CallToolResult, error) {
				return rigout.ErrorResult("%s", errorText), nil
			},
		},
		{
			Name:        "test_sampling",
			Description: "Asks the client's LLM (sampling/createMessage) to answer a prompt.",
			Risk:        rigout.ReadOnly,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"prompt":{"type":"string","description":"The prompt to send to the LLM."}},"required":["prompt"],"additionalProperties":false}`),
			Handler:     f.sampling,
		},
		{
			Name:        "test_elicitation",
			Description: "Asks the user (elicitation/create) for a username and an email address.",
			Risk:        rigout.ReadOnly,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string","description":"The message to show the user."}},"required":["message"],"additionalProperties":false}`),
			Handler: func(ctx context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
				var a struct {
					Message string `json:"message"`
				}
				if err := call.Bind(&a); err != nil {
					return nil, err
				}
				return f.elicit(ctx, "User response", a.Message, map[string]any{
					"type": "object",
					"properties": map[string]any{
						"username": map[string]any{"type": "string", "description": "User's response"},
						"email":    map[string]any{"type": "string", "description": "User's email address"},
					},
					"required": []string{"username", "email"},
				})
			},
		},
		{
			Name:        "test_elicitation_sep1034_defaults",
			Description: "Elicits a form whose string, integer, number, enum and boolean fields have defaults (SEP-1034).",
			Risk:        rigout.ReadOnly, InputSchema: noArgs,
			Handler: func(ctx context.Context, _ *rigout.Call) (*mcp.CallToolResult, error) {
				return f.elicit(ctx, "Elicitation completed", "Please review your information.", map[string]any{
					"type": "object",
					"properties": map[string]any{
						"name":     map[string]any{"type": "string", "title": "Name", "default": "John Doe"},
						"age":      map[string]any{"type": "integer", "title": "Age", "default": 30},
						"score":    map[string]any{"type": "number", "title": "Score", "default": 95.5},
						"status":   map[string]any{"type": "string", "title": "Status", "enum": []string{"active", "inactive", "pending"}, "default": "active"},
						"verified": map[string]any{"type": "boolean", "title": "Verified", "default": true},
					},
				})
			},
		},
		{
			Name:        "test_elicitation_sep1330_enums",
			Description: "Elicits a form with the five enum shapes of SEP-1330: untitled, titled and legacy single-select, untitled and titled multi-select.",
			Risk:        rigout.ReadOnly, InputSchema: noArgs,
			Handler: func(ctx context.Context, _ *rigout.Call) (*mcp.CallToolResult, error) {
				titled := func(kind string) []any {
					var out []any
					for i, n := range []string{"First", "Second", "Third"} {
						out = append(out, map[string]any{"const": fmt.Sprintf("value%d", i+1), "title": n + " " + kind})
					}
					return out
				}
				options := []string{"option1", "option2", "option3"}
				return f.elicit(ctx, "Elicitation completed", "Please make your choices.", map[string]any{
					"type": "object",
					"properties": map[string]any{
						"untitledSingle": map[string]any{"type": "string", "enum": options},
						"titledSingle":   map[string]any{"type": "string", "oneOf": titled("Option")},
						"legacyEnum": map[string]any{"type": "string", "enum": []string{"opt1", "opt2", "opt3"},
							"enumNames": []string{"Option One", "Option Two", "Option Three"}},
						"untitledMulti": map[string]any{"type": "array", "items": map[string]any{"type": "string", "enum": options}},
						"titledMulti":   map[string]any{"type": "array", "items": map[string]any{"anyOf": titled("Choice")}},
					},
				})
			},
		},
		{
			Name:        "json_schema_2020_12_tool",
			Description: "Tool with JSON Schema 2020-12 features: $schema, $defs with $anchor and $ref, allOf/anyOf, if/then/else, additionalProperties false.",
			Risk:        rigout.ReadOnly,
			InputSchema: json.RawMessage(`{
				"$schema": "https://json-schema.org/draft/2020-12/schema",
				"type": "object",
				"$defs": {
					"address": {
						"$anchor": "addressDef",
						"type": "object",
						"properties": {"street": {"type": "string"}, "city": {"type": "string"}}
					}
				},
				"properties": {
					"name": {"type": "string"},
					"address": {"$ref": "#/$defs/address"},
					"contactMethod": {"type": "string", "enum": ["phone", "email"]},
					"phone": {"type": "string"},
					"email": {"type": "string"}
				},
				"allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
				"if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
				"then": {"required": ["phone"]},
				"else": {"required": ["email"]},
				"additionalProperties": false
			}`),
			Handler: func(_ context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
				b, err := json.Marshal(call.Args)
				if err != nil {
					return nil, err
				}
				return rigout.TextResult("Received: " + string(b)), nil
			},
		},
		{
			Name:        "update_watched_resource",
			Description: "Changes test://watched-resource and notifies the sessions subscribed to it.",
			Risk:        rigout.Mutating, InputSchema: noArgs,
			Handler: func(context.Context, *rigout.Call) (*mcp.CallToolResult, error) {
				n, sent := f.touchWatched()
				return rigout.TextResult(fmt.Sprintf("%s is now at revision %d; %d subscribed session(s) notified", uriWatched, n, sent)), nil
			},
		},
	}
}

// withLogging sends three log notifications through the session, at the
// level the client set with logging/setLevel (info passes the default).
func (f *fixture) withLogging(ctx context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
	for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
		if i > 0 {
			if err := sleep(ctx, step); err != nil {
				return nil, err
			}
		}
		// Call.Log, not mcp-go's server, so the gateway delivers the
		// message before the result.
		if err := call.Log(ctx, mcp.LoggingLevelInfo, "everything", msg); err != nil {
			return rigout.ErrorResult("could not send log message %d: %v", i+1, err), nil
		}
	}
	return rigout.TextResult("Logging completed: 3 messages sent."), nil
}

// withProgress reports progress against the request's progress token, if
// it has one.
func (f *fixture) withProgress(ctx context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
	var token mcp.ProgressToken
	if m := call.Request.Params.Meta; m != nil {
		token = m.ProgressToken
	}
	for i, p := range []float64{0, 50, 100} {
		if i > 0 {
			if err := sleep(ctx, step); err != nil {
				return nil, err
			}
		}
		if token == nil {
			continue
		}
		if err := call.Progress(ctx, p, 100, fmt.Sprintf("step %d of 3", i+1)); err != nil {
			return rigout.ErrorResult("could not send progress %v: %v", p, err), nil
		}
	}
	if token == nil {
		return rigout.TextResult("Progress completed (the call carried no progress token, so none was reported)."), nil
	}
	return rigout.TextResult("Progress completed: 0, 50 and 100 of 100 reported."), nil
}

// sampling asks the client's model to answer the prompt.
func (f *fixture) sampling(ctx context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
	var a struct {
		Prompt string `json:"prompt"`
	}
	if err := call.Bind(&a); err != nil {
		return nil, err
	}
	if caps, ok := clientCapabilities(ctx); !ok || caps.Sampling == nil {
		return rigout.ErrorResult("the client did not declare the sampling capability"), nil
	}
	res, err := f.srv.RequestSampling(ctx, mcp.CreateMessageRequest{
		Request: mcp.Request{Method: string(mcp.MethodSamplingCreateMessage)},
		CreateMessageParams: mcp.CreateMessageParams{
			Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.NewTextContent(a.Prompt)}},
			MaxTokens: 100,
		},
	})
	if err != nil {
		return rigout.ErrorResult("sampling failed: %v", err), nil
	}
	text := fmt.Sprintf("%v", res.Content)
	if tc, ok := res.Content.(mcp.TextContent); ok {
		text = tc.Text
	}
	return rigout.TextResult("LLM response: " + text), nil
}

// elicit asks the user to fill in a form and reports the answer as
// "<prefix>: action=…, content=…".
func (f *fixture) elicit(ctx context.Context, prefix, message string, schema map[string]any) (*mcp.CallToolResult, error) {
	if caps, ok := clientCapabilities(ctx); !ok || caps.Elicitation == nil {
		return rigout.ErrorResult("the client did not declare the elicitation capability"), nil
	}
	res, err := f.srv.RequestElicitation(ctx, mcp.ElicitationRequest{
		Request: mcp.Request{Method: string(mcp.MethodElicitationCreate)},
		Params:  mcp.ElicitationParams{Message: message, RequestedSchema: schema},
	})
	if err != nil {
		return rigout.ErrorResult("elicitation failed: %v", err), nil
	}
	content, err := json.Marshal(res.Content)
	if err != nil {
		return nil, err
	}
	return rigout.TextResult(fmt.Sprintf("%s: action=%s, content=%s", prefix, res.Action, content)), nil
}

// clientCapabilities returns what the calling session's client declared at
// initialize.
func clientCapabilities(ctx context.Context) (mcp.ClientCapabilities, bool) {
	s, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo)
	if !ok {
		return mcp.ClientCapabilities{}, false
	}
	return s.GetClientCapabilities(), true
}

// addResources adds the test:// resources and the template.
func (f *fixture) addResources() {
	f.srv.AddResource(mcp.NewResource(uriStaticText, "static-text",
		mcp.WithResourceDescription("A static text resource."), mcp.WithMIMEType("text/plain")),
		func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: uriStaticText, MIMEType: "text/plain", Text: staticText}}, nil
		})
	f.srv.AddResource(mcp.NewResource(uriStaticBinary, "static-binary",
		mcp.WithResourceDescription("A static binary resource: a 1x1 red PNG."), mcp.WithMIMEType("image/png")),
		func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.BlobResourceContents{URI: uriStaticBinary, MIMEType: "image/png", Blob: f.png}}, nil
		})
	f.srv.AddResource(mcp.NewResource(uriWatched, "watched-resource",
		mcp.WithResourceDescription("A resource to subscribe to; update_watched_resource changes it."), mcp.WithMIMEType("text/plain")),
		func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			f.mu.Lock()
			n := f.watched
			f.mu.Unlock()
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: uriWatched, MIMEType: "text/plain", Text: fmt.Sprintf("revision %d", n)}}, nil
		})
	f.srv.AddResourceTemplate(mcp.NewResourceTemplate(uriTemplate, "template-data",
		mcp.WithTemplateDescription("JSON data for any ID: test://template/{id}/data."), mcp.WithTemplateMIMEType("application/json")),
		func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			id := templateArg(req.Params.Arguments["id"])
			if id == "" {
				return nil, fmt.Errorf("no id in %s", req.Params.URI)
			}
			b, err := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
			if err != nil {
				return nil, err
			}
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "application/json", Text: string(b)}}, nil
		})
}

// templateArg reads one matched URI template variable, which mcp-go gives
// as a list of strings.
func templateArg(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []string:
		if len(v) > 0 {
			return v[0]
		}
	}
	return ""
}

// addPrompts adds the test_* prompts.
func (f *fixture) addPrompts() {
	f.srv.AddPrompt(mcp.NewPrompt("test_simple_prompt",
		mcp.WithPromptDescription("A prompt without arguments.")),
		func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return mcp.NewGetPromptResult("A simple prompt", []mcp.PromptMessage{
				mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(promptText)),
			}), nil
		})
	f.srv.AddPrompt(mcp.NewPrompt("test_prompt_with_arguments",
		mcp.WithPromptDescription("A prompt with two required arguments."),
		mcp.WithArgument("arg1", mcp.ArgumentDescription("First test argument"), mcp.RequiredArgument()),
		mcp.WithArgument("arg2", mcp.ArgumentDescription("Second test argument"), mcp.RequiredArgument())),
		func(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			a1, ok1 := req.Params.Arguments["arg1"]
			a2, ok2 := req.Params.Arguments["arg2"]
			if !ok1 || !ok2 {
				return nil, errors.New("arguments arg1 and arg2 are required")
			}
			return mcp.NewGetPromptResult("A prompt with arguments", []mcp.PromptMessage{
				mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", a1, a2))),
			}), nil
		})
	f.srv.AddPrompt(mcp.NewPrompt("test_prompt_with_embedded_resource",
		mcp.WithPromptDescription("A prompt that embeds the resource it is given."),
		mcp.WithArgument("resourceUri", mcp.ArgumentDescription("URI of the resource to embed"), mcp.RequiredArgument())),
		func(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			uri := req.Params.Arguments["resourceUri"]
			if uri == "" {
				return nil, errors.New("argument resourceUri is required")
			}
			return mcp.NewGetPromptResult("A prompt with an embedded resource", []mcp.PromptMessage{
				mcp.NewPromptMessage(mcp.RoleUser, mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: uri, MIMEType: "text/plain", Text: promptResourceTxt})),
				mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("Please process the embedded resource above.")),
			}), nil
		})
	f.srv.AddPrompt(mcp.NewPrompt("test_prompt_with_image",
		mcp.WithPromptDescription("A prompt with an image.")),
		func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return mcp.NewGetPromptResult("A prompt with an image", []mcp.PromptMessage{
				mcp.NewPromptMessage(mcp.RoleUser, mcp.NewImageContent(f.png, "image/png")),
				mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("Please analyze the image above.")),
			}), nil
		})
}

// subscribe records or forgets a session's subscription to a URI.
func (f *fixture) subscribe(ctx context.Context, uri string, on bool) {
	s := server.ClientSessionFromContext(ctx)
	if s == nil {
		return
	}
	id := s.SessionID()
	f.mu.Lock()
	defer f.mu.Unlock()
	if on {
		if f.subs[id] == nil {
			f.subs[id] = make(map[string]bool)
		}
		f.subs[id][uri] = true
		return
	}
	delete(f.subs[id], uri)
	if len(f.subs[id]) == 0 {
		delete(f.subs, id)
	}
}

// subscribers returns the sessions subscribed to uri, sorted.
func (f *fixture) subscribers(uri string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ids []string
	for id, uris := range f.subs {
		if uris[uri] {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// touchWatched bumps the watched resource's revision and sends
// notifications/resources/updated to its subscribers. It returns the new
// revision and how many sessions were notified.
func (f *fixture) touchWatched() (revision, sent int) {
	f.mu.Lock()
	f.watched++
	revision = f.watched
	f.mu.Unlock()
	for _, id := range f.subscribers(uriWatched) {
		err := f.srv.SendNotificationToSpecificClient(id, mcp.MethodNotificationResourceUpdated, map[string]any{"uri": uriWatched})
		if err != nil {
			f.log.Warn("resource update not delivered", "session", id, "err", err)
			continue
		}
		sent++
	}
	return revision, sent
}

// completer offers completions for the prompt arguments and the template's
// {id}: the candidates that start with what was typed so far.
type completer struct{}

var (
	promptCandidates = []string{"paris", "park", "party", "test", "testValue1", "testValue2"}
	idCandidates     = []string{"1", "2", "3", "42", "123"}
)

func (completer) CompletePromptArgument(_ context.Context, prompt string, arg mcp.CompleteArgument, _ mcp.CompleteContext) (*mcp.Completion, error) {
	if prompt != "test_prompt_with_arguments" {
		return &mcp.Completion{Values: []string{}}, nil
	}
	return complete(promptCandidates, arg.Value), nil
}

func (completer) CompleteResourceArgument(_ context.Context, uri string, arg mcp.CompleteArgument, _ mcp.CompleteContext) (*mcp.Completion, error) {
	if uri != uriTemplate || arg.Name != "id" {
		return &mcp.Completion{Values: []string{}}, nil
	}
	return complete(idCandidates, arg.Value), nil
}

func complete(candidates []string, prefix string) *mcp.Completion {
	values := []string{}
	for _, c := range candidates {
		if strings.HasPrefix(c, prefix) {
			values = append(values, c)
		}
	}
	return &mcp.Completion{Values: values, Total: len(values)}
}

// sleep waits for d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
