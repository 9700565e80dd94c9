package ui_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"

	"github.com/rigout/rigout/audit/sqlite"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/ui"
)

// The page reads the ledger and signs people in with the front's bearer
// check; mount it at ui.Prefix behind the front's Guard.
func Example() {
	dir, _ := os.MkdirTemp("", "ui-example-")
	defer os.RemoveAll(dir)
	ledger, err := sqlite.Open(context.Background(), sqlite.Config{Path: filepath.Join(dir, "audit.db")})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ledger.Close()
	front, err := auth.New(auth.Config{
		Listener: "127.0.0.1:8765", ResourceURL: "http://127.0.0.1:8765/mcp",
		Tokens: []auth.Token{{Name: "ops", Secret: auth.NewSecret("an-example-token-of-32-bytes-xx"), Scopes: auth.FullScopes()}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	page, err := ui.New(ui.Config{Ledger: ledger, Authenticate: front.RequireBearer})
	if err != nil {
		fmt.Println(err)
		return
	}
	mux := http.NewServeMux()
	mux.Handle(ui.Prefix, front.Guard(page))
	fmt.Println("activity page at", ui.Prefix)
	// Output:
	// activity page at /ui/
}
