package rigouttest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/rigouttest"
)

// A tool under test goes through the gateway's whole chain: the schema
// refuses a bad argument before the handler runs, and the ledger holds
// the rows of every call: an intent and a done row for one that ran, a
// single row for one refused. In a test, rigouttest.NewServer(t, cfg) does what
// Start and Close do here.
func Example() {
	greet := rigout.Tool{
		Name:        "greet",
		Description: "Greet someone.",
		Risk:        rigout.ReadOnly,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"],"additionalProperties":false}`),
		Handler: func(_ context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
			var a struct{ Name string }
			if err := call.Bind(&a); err != nil {
				return nil, err
			}
			return rigout.TextResult("hello, " + a.Name), nil
		},
	}
	s, err := rigouttest.Start(rigout.Config{Tools: []rigout.Tool{greet}})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	ctx := context.Background()
	for _, args := range []map[string]any{{"name": "ops"}, {"name": 42}} {
		res, err := s.CallTool(ctx, "greet", args)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("error=%v %s\n", res.IsError, firstLine(rigouttest.Text(res)))
	}
	rows, err := s.Query(ctx, audit.Filter{Tool: "greet"})
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range rows {
		fmt.Println(e.Type, e.Phase, e.Principal, e.Status)
	}
	// Output:
	// error=false hello, ops
	// error=true invalid arguments for greet: name: got number, want string
	// tool.call intent local started
	// tool.call done local ok
	// tool.call  local invalid
}

func firstLine(s string) string {
	for i, c := range s {
		if c == '\n' {
			return s[:i]
		}
	}
	return s
}
