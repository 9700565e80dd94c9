// Package gwtest holds the test helpers of this module that are not for
// embedders: the forms a secret takes in output, and a credentials store
// of one secret (secrets.go). The gateway harness it held is the public
// package rigouttest; the functions below delegate to it, for tests
// written before the move.
package gwtest

import (
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/sqlite"
	"github.com/rigout/rigout/rigouttest"
)

// New is rigouttest.New.
//
// Deprecated: use rigouttest.New.
func New(t testing.TB, cfg rigout.Config) *rigout.Gateway { t.Helper(); return rigouttest.New(t, cfg) }

// Connect is rigouttest.Connect.
//
// Deprecated: use rigouttest.Connect.
func Connect(t testing.TB, gw *rigout.Gateway) *client.Client {
	t.Helper()
	return rigouttest.Connect(t, gw)
}

// Initialize is rigouttest.Initialize.
//
// Deprecated: use rigouttest.Initialize.
func Initialize(t testing.TB, c *client.Client, name string) *client.Client {
	t.Helper()
	return rigouttest.Initialize(t, c, name)
}

// Call is rigouttest.Call.
//
// Deprecated: use rigouttest.Call.
func Call(t testing.TB, c *client.Client, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	return rigouttest.Call(t, c, name, args)
}

// Text is rigouttest.Text.
//
// Deprecated: use rigouttest.Text.
func Text(res *mcp.CallToolResult) string { return rigouttest.Text(res) }

// Structured is rigouttest.Structured.
//
// Deprecated: use rigouttest.Structured.
func Structured(t testing.TB, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	return rigouttest.Structured(t, res)
}

// OpenLedger is rigouttest.OpenLedger.
//
// Deprecated: use rigouttest.OpenLedger.
func OpenLedger(t testing.TB) *sqlite.Ledger { t.Helper(); return rigouttest.OpenLedger(t) }

// Events is rigouttest.Events.
//
// Deprecated: use rigouttest.Events.
func Events(t testing.TB, l audit.Querier, f audit.Filter) []audit.Event {
	t.Helper()
	return rigouttest.Events(t, l, f)
}

// ServeHTTP is rigouttest.ServeHTTP.
//
// Deprecated: use rigouttest.ServeHTTP.
func ServeHTTP(t testing.TB, gw *rigout.Gateway) string {
	t.Helper()
	return rigouttest.ServeHTTP(t, gw)
}
