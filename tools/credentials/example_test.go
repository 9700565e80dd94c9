package credentials_test

import (
	"fmt"
	"os"
	"path/filepath"

	credstore "github.com/rigout/rigout/credentials"
	"github.com/rigout/rigout/tools/credentials"
)

// The family's one tool lists, checks and (with reveal_secrets) gets.
func Example() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	f := filepath.Join(dir, "v")
	os.WriteFile(f, []byte("example-value-123"), 0o600)
	store, _ := credstore.New(credstore.Config{Aliases: map[string]credstore.Spec{"db": {File: f}}})
	cf, _ := credentials.New(credentials.Config{Store: store})
	for _, t := range cf.Tools() {
		fmt.Println(t.Name, t.Needs[0].Capability, t.Needs[0].Actions)
	}
	// Output: credentials reveal_secrets [get]
}
