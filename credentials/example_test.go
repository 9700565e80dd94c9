package credentials_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rigout/rigout/credentials"
)

func Example() {
	dir, _ := os.MkdirTemp("", "cred")
	defer os.RemoveAll(dir)
	f := filepath.Join(dir, "token")
	os.WriteFile(f, []byte("ghp-example-value\n"), 0o600)

	store, err := credentials.New(credentials.Config{Aliases: map[string]credentials.Spec{
		"github": {File: f, Hosts: []string{"build-*"}},
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(store.Allow("github", "build-1", "execute_command"))
	fmt.Println(store.Allow("github", "db-1", "execute_command"))
	v, _ := store.Resolve(context.Background(), "github")
	fmt.Println(v, len(v.Reveal()))
	// Output:
	// <nil>
	// credential alias "github" may not be used on host "db-1" (see its "hosts")
	// [REDACTED] 17
}
