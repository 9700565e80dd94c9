package files_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/credentials"
	"github.com/rigout/rigout/tools/files"
)

// A token confined to one root edits a file there, and cannot read past
// the root through a symbolic link.
func Example() {
	dir, _ := os.MkdirTemp("", "files-example")
	defer os.RemoveAll(dir)
	root := filepath.Join(dir, "app")
	_ = os.Mkdir(root, 0o755)
	_ = os.WriteFile(filepath.Join(root, "config.ini"), []byte("port = 80\nname = demo\n"), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "secret"), []byte("outside\n"), 0o600)
	_ = os.Symlink("../secret", filepath.Join(root, "link"))

	ff, err := files.New(files.Config{WorkDir: root})
	if err != nil {
		fmt.Println(err)
		return
	}
	scopes := auth.FullScopes()
	scopes.Roots = []string{root}
	gw, err := rigout.New(rigout.Config{Tools: ff.Tools(), Principal: &auth.Principal{Name: "agent", Scopes: scopes}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer gw.Close()
	c, _ := client.NewInProcessClient(gw.MCPServer())
	defer c.Close()
	ctx := context.Background()
	_ = c.Start(ctx)
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	_, _ = c.Initialize(ctx, init)
	call := func(args map[string]any) (string, bool) {
		var req mcp.CallToolRequest
		req.Params.Name, req.Params.Arguments = "file_operations", args
		res, err := c.CallTool(ctx, req)
		if err != nil {
			return err.Error(), true
		}
		return res.Content[0].(mcp.TextContent).Text, res.IsError
	}

	out, _ := call(map[string]any{"action": "edit", "path": "config.ini", "old_string": "port = 80", "new_string": "port = 8080"})
	fmt.Println(out[strings.Index(out, "@@"):])
	_, refused := call(map[string]any{"action": "read", "path": "link"})
	fmt.Println("read through the link refused:", refused)
	// Output:
	// @@ -1,2 +1,2 @@
	// -port = 80
	// +port = 8080
	//  name = demo
	//
	// read through the link refused: true
}

// An agent writes a configuration file holding a credential it never
// sees: ${secret.NAME} is replaced on the way to the disk, and reading the
// file back shows it masked.
func ExampleConfig_credentials() {
	dir, _ := os.MkdirTemp("", "files-example")
	defer os.RemoveAll(dir)
	keyFile := filepath.Join(dir, "db.key")
	_ = os.WriteFile(keyFile, []byte("s3cr3t-db-password-42\n"), 0o600)
	store, err := credentials.New(credentials.Config{Aliases: map[string]credentials.Spec{
		"db": {File: keyFile, Tools: []string{"file_operations"}},
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	ff, _ := files.New(files.Config{WorkDir: dir, Credentials: store})
	gw, _ := rigout.New(rigout.Config{Tools: ff.Tools(), Principal: &auth.Principal{Name: "agent", Scopes: auth.FullScopes()}})
	defer gw.Close()
	c, _ := client.NewInProcessClient(gw.MCPServer())
	defer c.Close()
	ctx := context.Background()
	_ = c.Start(ctx)
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	_, _ = c.Initialize(ctx, init)
	call := func(args map[string]any) string {
		var req mcp.CallToolRequest
		req.Params.Name, req.Params.Arguments = "file_operations", args
		res, err := c.CallTool(ctx, req)
		if err != nil {
			return err.Error()
		}
		return res.Content[0].(mcp.TextContent).Text
	}

	call(map[string]any{"action": "write", "path": "app.env", "secrets": map[string]any{"DB": "db"},
		"content": "DB_HOST=db1\nDB_CONNECT=${secret.DB}\n"})
	disk, _ := os.ReadFile(filepath.Join(dir, "app.env"))
	fmt.Println("on disk:", strings.Contains(string(disk), "s3cr3t-db-password-42"))
	out := call(map[string]any{"action": "read", "path": "app.env"})
	fmt.Print(out[strings.Index(out, "\n")+1:])
	// Output:
	// on disk: true
	//      1	DB_HOST=db1
	//      2	DB_CONNECT=***
}
