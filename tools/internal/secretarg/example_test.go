package secretarg_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/credentials"
	"github.com/rigout/rigout/tools/internal/secretarg"
)

// A tool that takes `secrets` resolves them with Resolve: a refusal is
// its result; otherwise the values are masked in whatever it returns.
func Example() {
	dir, _ := os.MkdirTemp("", "secretarg")
	defer os.RemoveAll(dir)
	f := filepath.Join(dir, "token")
	os.WriteFile(f, []byte("example-token-value\n"), 0o600)
	store, _ := credentials.New(credentials.Config{Aliases: map[string]credentials.Spec{"deploy": {File: f, Tools: []string{"echo_secret"}}}})

	tool := rigout.Tool{
		Name:        "echo_secret",
		Description: "Shows what a careless tool would leak.",
		InputSchema: json.RawMessage(`{"type": "object", "properties": {` + secretarg.Property + `"x": {"type": "string"}}}`),
		Risk:        rigout.ReadOnly,
		Handler: func(ctx context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
			var a struct {
				Secrets map[string]string `json:"secrets"`
			}
			if err := call.Bind(&a); err != nil {
				return nil, err
			}
			r, refusal := secretarg.Resolve(ctx, call, store, a.Secrets, nil)
			if r == nil {
				return refusal, nil
			}
			return rigout.TextResult("value: " + r.Use.Env()["TOKEN"]), nil
		},
	}
	gw, _ := rigout.New(rigout.Config{Tools: []rigout.Tool{tool}})
	defer gw.Close()
	c, _ := client.NewInProcessClient(gw.MCPServer())
	defer c.Close()
	ctx := context.Background()
	_ = c.Start(ctx)
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	_, _ = c.Initialize(ctx, init)
	for _, alias := range []string{"deploy", "nope"} {
		var req mcp.CallToolRequest
		req.Params.Name = "echo_secret"
		req.Params.Arguments = map[string]any{"secrets": map[string]any{"TOKEN": alias}}
		res, _ := c.CallTool(ctx, req)
		fmt.Println(res.IsError, res.Content[0].(mcp.TextContent).Text)
	}
	// Output:
	// false value: ***
	// true secrets TOKEN: unknown credential alias "nope"
}
