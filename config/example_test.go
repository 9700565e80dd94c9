package config_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rigout/rigout/config"
)

// Read a configuration, check it, change it and write it back.
func Example() {
	f, err := config.Parse("rigout.json", []byte(`{
		"tokens": [{"name": "ci", "env": "CI_RIGOUT_TOKEN", "scopes": {"tools": ["execute_command"]}}],
		"policy": {"mode": "deny", "rules": {"sudo": "confirm"}},
		"rate_limit": {"per_principal": "10/s"}
	}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	env := map[string]string{"CI_RIGOUT_TOKEN": "a-token-kept-in-the-environment"}
	fmt.Println("problems:", len(f.Check(func(k string) string { return env[k] })))
	fmt.Println("secrets in:", f.SecretEnv())
	fmt.Println("host keys:", f.HostKeys(""))

	f.Families.Docker = true
	b, err := f.Marshal()
	if err != nil {
		fmt.Println(err)
		return
	}
	again, err := config.Parse("rigout.json", b)
	fmt.Println("read back:", err == nil && again.Families.Docker)
	// Output:
	// problems: 0
	// secrets in: [CI_RIGOUT_TOKEN]
	// host keys: strict
	// read back: true
}

// A misspelt key is refused with its place in the file and the key meant.
func ExampleLoad() {
	dir, err := os.MkdirTemp("", "rigout-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "rigout.json")
	if err := os.WriteFile(path, []byte("{\n  \"tool_families\": {\"dockr\": true}\n}\n"), 0o600); err != nil {
		fmt.Println(err)
		return
	}
	_, err = config.Load(path)
	var pe *config.PositionError
	if errors.As(err, &pe) {
		fmt.Println(pe.Line, pe.Col, pe.Path)
	}
	// Output:
	// 2 21 tool_families
}
