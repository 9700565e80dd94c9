package hosts_test

import (
	"context"
	"fmt"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/exec/remote"
	"github.com/rigout/rigout/tools/hosts"
)

// manage_hosts declares a risk per action: a read-only token may list the
// hosts but not add one.
func Example() {
	r, err := remote.NewRouter(remote.RouterConfig{
		HostKeyPolicy: remote.HostKeyStrict,
		Hosts:         []remote.HostConfig{{Name: "web1", Address: "127.0.0.1", Port: 2222, Labels: []string{"web"}}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	hf, err := hosts.New(hosts.Config{Router: r})
	if err != nil {
		fmt.Println(err)
		return
	}
	reader := auth.Principal{Name: "reader", Scopes: auth.Scopes{Tools: []string{"*"}, Hosts: []string{"*"}, ReadOnly: true}}
	gw, _ := rigout.New(rigout.Config{Tools: hf.Tools(), Principal: &reader})
	defer gw.Close()
	c, _ := client.NewInProcessClient(gw.MCPServer())
	defer c.Close()
	ctx := context.Background()
	_ = c.Start(ctx)
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	_, _ = c.Initialize(ctx, init)

	for _, args := range []map[string]any{
		{"action": "list"},
		{"action": "add", "host": "db1", "address": "127.0.0.1"},
	} {
		var req mcp.CallToolRequest
		req.Params.Name = "manage_hosts"
		req.Params.Arguments = args
		res, _ := c.CallTool(ctx, req)
		text := res.Content[0].(mcp.TextContent).Text
		if !res.IsError {
			text = fmt.Sprint(len(r.List()), " host")
		}
		fmt.Println(args["action"], res.IsError, text)
	}
	// Output:
	// list false 1 host
	// add true auth: missing scope write: this token is read-only
}
