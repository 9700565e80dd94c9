package shell_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout/tools/shell"
)

func TestLongCommandReportsProgress(t *testing.T) {
	c := connect(t, newGateway(t, setup{Shell: shell.Config{ProgressInterval: 100 * time.Millisecond}}))
	var mu sync.Mutex
	var progress []float64
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method != "notifications/progress" {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if n.Params.AdditionalFields["progressToken"] != "tok-1" {
			t.Errorf("progress for token %v", n.Params.AdditionalFields["progressToken"])
		}
		if p, ok := n.Params.AdditionalFields["progress"].(float64); ok {
			progress = append(progress, p)
		} else if p, ok := n.Params.AdditionalFields["progress"].(int64); ok {
			progress = append(progress, float64(p))
		}
	})
	var req mcp.CallToolRequest
	req.Params.Name = "execute_command"
	req.Params.Arguments = map[string]any{"command": "for i in 1 2 3 4 5 6 7 8; do echo tick; sleep 0.1; done"}
	req.Params.Meta = &mcp.Meta{ProgressToken: "tok-1"}
	res, err := c.CallTool(context.Background(), req)
	if err != nil || res.IsError {
		t.Fatalf("%v %v", err, res)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(progress) < 3 {
		t.Fatalf("got %d progress notifications, want at least 3: %v", len(progress), progress)
	}
	for i := 1; i < len(progress); i++ {
		if progress[i] <= progress[i-1] {
			t.Errorf("progress not increasing: %v", progress)
		}
	}

	// Without a token, no progress is sent.
	progress = nil
	mu.Unlock()
	req.Params.Meta = nil
	if _, err := c.CallTool(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(progress) != 0 {
		t.Errorf("progress without a token: %v", progress)
	}
}
