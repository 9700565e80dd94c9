// Command customtool shows how an embedder adds its own tool to a rigout
// gateway: one Tool row, registered beside a built-in family (the shell
// family's execute_command), passing through the same registry, schema
// validation, scope checks and middleware.
//
// Run it as an MCP stdio server:
//
//	go run ./examples/customtool
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/sandboxcfg"
	"github.com/rigout/rigout/tools/shell"
	"github.com/rigout/rigout/transport"
)

// diskFree is the embedder's tool: free space of a file system, read with
// statfs(2) — no shell involved.
var diskFree = rigout.Tool{
	Name:        "disk_free",
	Description: "Free and total bytes of the file system holding a path.",
	Risk:        rigout.ReadOnly,
	// path names a file path: the chain checks it against the token's file
	// roots before the handler runs.
	Paths: []rigout.PathArg{{Name: "path"}},
	InputSchema: json.RawMessage(`{
		"type": "object",
		"properties": {"path": {"type": "string", "description": "Any path on the file system. Default /."}},
		"additionalProperties": false
	}`),
	Handler: func(ctx context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
		var args struct {
			Path string `json:"path"`
		}
		if err := call.Bind(&args); err != nil {
			return nil, err
		}
		if args.Path == "" {
			args.Path = "/"
		}
		var st syscall.Statfs_t
		if err := syscall.Statfs(args.Path, &st); err != nil {
			return rigout.ErrorResult("statfs %s: %v", args.Path, err), nil
		}
		free, total := st.Bavail*uint64(st.Bsize), st.Blocks*uint64(st.Bsize)
		res := rigout.TextResult(fmt.Sprintf("%s: %d of %d bytes free", args.Path, free, total))
		res.StructuredContent = map[string]any{"path": args.Path, "free": free, "total": total}
		return res, nil
	},
}

// newGateway builds the gateway: execute_command plus disk_free.
func newGateway(logger *slog.Logger) (*rigout.Gateway, error) {
	// execute_command runs its commands in a kernel sandbox derived from
	// the default policy, as the rigout binary does (state in the user's
	// cache directory, hidden from commands where the kernel can).
	state, err := os.UserCacheDir()
	if err != nil {
		return nil, err
	}
	cfg, _ := sandboxcfg.Derive(nil, filepath.Join(state, "customtool"))
	sb, err := exec.NewSandbox(cfg)
	if err != nil {
		return nil, err
	}
	sh, err := shell.New(shell.Config{Local: &exec.Local{Sandbox: sb}})
	if err != nil {
		return nil, err
	}
	return rigout.New(rigout.Config{
		Name:   "customtool",
		Logger: logger,
		Tools:  append(sh.Tools(), diskFree),
	})
}

func main() {
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil)) // stdout carries the protocol
	gw, err := newGateway(logger)
	if err != nil {
		logger.Error("build gateway", "err", err)
		os.Exit(1)
	}
	defer gw.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger.Info("serving on stdio", "tools", len(gw.Tools()), "go", runtime.Version())
	if err := transport.ServeStdio(ctx, gw.MCPServer(), os.Stdin, os.Stdout, transport.StdioConfig{Logger: logger}); err != nil {
		logger.Error("serve", "err", err)
		os.Exit(1)
	}
}
