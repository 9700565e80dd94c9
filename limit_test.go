package rigout_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/auth"
)

func TestConcurrencyCaps(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 16)
	block := rigout.Tool{
		Name: "block", Description: "Waits until released.", Risk: rigout.ReadOnly,
		Handler: func(ctx context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
			started <- struct{}{}
			<-release
			return rigout.TextResult("done"), nil
		},
	}
	p := auth.Principal{Name: "p1", Scopes: auth.FullScopes()}
	gw := newGateway(t, rigout.Config{Tools: []rigout.Tool{block}, MaxConcurrent: 3, MaxConcurrentPerPrincipal: 2, Principal: &p})
	c := connect(t, gw)

	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Go(func() { callTool(t, c, "block", nil) })
	}
	<-started
	<-started
	// The principal's third call is refused at once: the two calls hold
	// their slots until the test releases them, so a call that waited for
	// a slot would never return.
	res := callTool(t, c, "block", nil)
	if !res.IsError || !strings.Contains(text(res), "busy: p1 already has 2 calls running") {
		t.Errorf("over the per-principal cap: %q", text(res))
	}
	// Another principal still gets the last slot of the gateway, then the
	// gateway is full for everyone.
	ctx := auth.NewContext(context.Background(), auth.Principal{Name: "p2", Scopes: auth.FullScopes()})
	var req mcp.CallToolRequest
	req.Params.Name = "block"
	wg.Go(func() {
		if _, err := c.CallTool(ctx, req); err != nil {
			t.Error(err)
		}
	})
	<-started
	res, err := c.CallTool(auth.NewContext(context.Background(), auth.Principal{Name: "p3", Scopes: auth.FullScopes()}), req)
	if err != nil || !res.IsError || !strings.Contains(text(res), "busy: this gateway is already running 3 calls") {
		t.Errorf("over the gateway cap: %v %q", err, text(res))
	}
	close(release)
	wg.Wait()
	if res := callTool(t, c, "block", nil); res.IsError {
		t.Errorf("after release: %q", text(res))
	}
}
