package clientconfig_test

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rigout/rigout/clientconfig"
)

var (
	stdioEP = clientconfig.Endpoint{Command: "/usr/local/bin/rigout", Args: []string{"stdio", "--config", "/etc/rig out.json"}}
	httpEP  = clientconfig.Endpoint{URL: "http://127.0.0.1:8080/mcp", Headers: map[string]string{"Authorization": "Bearer s3cret"}}
)

// get walks a decoded JSON value along dotted keys.
func get(t *testing.T, v any, path string) any {
	t.Helper()
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("%s: %v is not an object at %q", path, v, k)
		}
		v = m[k]
	}
	return v
}

func decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, s)
	}
	return v
}

func TestNewEntry(t *testing.T) {
	tests := []struct {
		name   string
		client clientconfig.Client
		ep     clientconfig.Endpoint
		check  func(t *testing.T, e clientconfig.Entry)
	}{
		{"claude-code stdio", clientconfig.ClaudeCode, stdioEP, func(t *testing.T, e clientconfig.Entry) {
			want := "claude mcp add rig -- /usr/local/bin/rigout stdio --config '/etc/rig out.json'\n"
			if e.Snippet != want {
				t.Errorf("snippet %q, want %q", e.Snippet, want)
			}
			if e.Server["type"] != "stdio" || e.Server["command"] != stdioEP.Command {
				t.Errorf("server %v", e.Server)
			}
		}},
		{"claude-code http", clientconfig.ClaudeCode, httpEP, func(t *testing.T, e clientconfig.Entry) {
			want := "claude mcp add --transport http rig http://127.0.0.1:8080/mcp --header 'Authorization: Bearer s3cret'\n"
			if e.Snippet != want {
				t.Errorf("snippet %q, want %q", e.Snippet, want)
			}
		}},
		{"claude-desktop http goes through mcp-remote, the header in env", clientconfig.ClaudeDesktop, httpEP, func(t *testing.T, e clientconfig.Entry) {
			v := decode(t, e.Snippet)
			if get(t, v, "mcpServers.rig.command") != "npx" || get(t, v, "mcpServers.rig.env.RIGOUT_AUTH_HEADER") != "Bearer s3cret" {
				t.Errorf("snippet %s", e.Snippet)
			}
			args, _ := json.Marshal(e.Server["args"])
			if string(args) != `["-y","mcp-remote","http://127.0.0.1:8080/mcp","--header","Authorization:${RIGOUT_AUTH_HEADER}"]` {
				t.Errorf("args %s", args)
			}
		}},
		{"cursor stdio with env", clientconfig.Cursor, clientconfig.Endpoint{Command: "x", Env: map[string]string{"A": "1"}}, func(t *testing.T, e clientconfig.Entry) {
			v := decode(t, e.Snippet)
			if get(t, v, "mcpServers.rig.command") != "x" || get(t, v, "mcpServers.rig.env.A") != "1" {
				t.Errorf("snippet %s", e.Snippet)
			}
		}},
		{"cursor http without headers", clientconfig.Cursor, clientconfig.Endpoint{URL: "http://h/mcp"}, func(t *testing.T, e clientconfig.Entry) {
			if h, ok := get(t, decode(t, e.Snippet), "mcpServers.rig.headers").(map[string]any); !ok || len(h) != 0 {
				t.Errorf("snippet %s", e.Snippet)
			}
		}},
		{"vscode http under servers", clientconfig.VSCode, httpEP, func(t *testing.T, e clientconfig.Entry) {
			v := decode(t, e.Snippet)
			if get(t, v, "servers.rig.type") != "http" || get(t, v, "servers.rig.headers.Authorization") != "Bearer s3cret" {
				t.Errorf("snippet %s", e.Snippet)
			}
		}},
		{"codex http: the token only in the environment", clientconfig.Codex, httpEP, func(t *testing.T, e clientconfig.Entry) {
			want := "[mcp_servers.rig]\nrequired = true\ndefault_tools_approval_mode = \"approve\"\n" +
				"url = \"http://127.0.0.1:8080/mcp\"\nbearer_token_env_var = \"RIGOUT_MCP_TOKEN\"\n"
			if e.Snippet != want {
				t.Errorf("snippet %q, want %q", e.Snippet, want)
			}
			if e.Server != nil || len(e.Environment) != 1 || e.Environment[clientconfig.CodexTokenVar] != "s3cret" {
				t.Errorf("server %v environment %v", e.Server, e.Environment)
			}
		}},
		{"codex stdio with env", clientconfig.Codex, clientconfig.Endpoint{Command: "rigout", Args: []string{"stdio"}, Env: map[string]string{"B": "2", "A": "x\"y"}}, func(t *testing.T, e clientconfig.Entry) {
			want := "[mcp_servers.rig]\nrequired = true\ndefault_tools_approval_mode = \"approve\"\n" +
				"command = \"rigout\"\nargs = [\"stdio\"]\nenv = { \"A\" = \"x\\\"y\", \"B\" = \"2\" }\n"
			if e.Snippet != want || e.Environment != nil {
				t.Errorf("snippet %q, want %q; environment %v", e.Snippet, want, e.Environment)
			}
		}},
		{"json http", clientconfig.JSON, httpEP, func(t *testing.T, e clientconfig.Entry) {
			v := decode(t, e.Snippet)
			if get(t, v, "transport") != "streamable-http" || get(t, v, "headers.Authorization") != "Bearer s3cret" || e.Server != nil {
				t.Errorf("snippet %s", e.Snippet)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := clientconfig.NewEntry(tt.client, "rig", tt.ep)
			if err != nil {
				t.Fatal(err)
			}
			if e.Client != tt.client || e.Name != "rig" || !strings.HasSuffix(e.Snippet, "\n") {
				t.Errorf("entry %+v", e)
			}
			tt.check(t, e)
		})
	}
}

func TestNewEntryRefuses(t *testing.T) {
	tests := []struct {
		name   string
		client clientconfig.Client
		server string
		ep     clientconfig.Endpoint
		want   error  // errors.Is, when set
		substr string // in the message, when set
	}{
		{"unknown client", "emacs", "rig", stdioEP, nil, `unknown client "emacs"; want one of: claude-code, claude-desktop, cursor, vscode, codex, json`},
		{"empty name", clientconfig.Cursor, "", stdioEP, clientconfig.ErrName, ""},
		{"dotted name", clientconfig.Codex, "a.b", stdioEP, clientconfig.ErrName, ""},
		{"bracket name", clientconfig.Codex, "a]", stdioEP, clientconfig.ErrName, ""},
		{"no endpoint", clientconfig.Cursor, "rig", clientconfig.Endpoint{}, clientconfig.ErrEndpoint, ""},
		{"both endpoints", clientconfig.Cursor, "rig", clientconfig.Endpoint{Command: "x", URL: "http://h"}, clientconfig.ErrEndpoint, ""},
		{"codex non-bearer auth", clientconfig.Codex, "rig", clientconfig.Endpoint{URL: "http://h", Headers: map[string]string{"Authorization": "Basic dXNlcjpwdw=="}}, nil, "bearer token only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := clientconfig.NewEntry(tt.client, tt.server, tt.ep)
			if err == nil {
				t.Fatal("accepted")
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("err %v, want %v", err, tt.want)
			}
			if tt.substr != "" && !strings.Contains(err.Error(), tt.substr) {
				t.Errorf("err %q, want it to say %q", err, tt.substr)
			}
			if strings.Contains(err.Error(), "dXNlcjpwdw") {
				t.Errorf("the error shows the credential: %v", err)
			}
		})
	}
}

func TestParseClient(t *testing.T) {
	for _, c := range clientconfig.Clients() {
		got, err := clientconfig.ParseClient(string(c))
		if err != nil || got != c || c.Title() == "" {
			t.Errorf("ParseClient(%q) = %q, %v; title %q", c, got, err, c.Title())
		}
	}
	_, err := clientconfig.ParseClient("Cursor")
	var ue *clientconfig.UnknownClientError
	if !errors.As(err, &ue) || ue.Name != "Cursor" {
		t.Fatalf("ParseClient(Cursor) = %v, want an UnknownClientError", err)
	}
	for _, c := range clientconfig.Clients() {
		if !strings.Contains(err.Error(), string(c)) {
			t.Errorf("%q does not list %s", err, c)
		}
	}
}

func TestFile(t *testing.T) {
	env := map[string]string{"XDG_CONFIG_HOME": "/xdg", "APPDATA": `/appdata`}
	getenv := func(k string) string { return env[k] }
	tests := []struct {
		client clientconfig.Client
		goos   string
		getenv func(string) string
		want   string
	}{
		{clientconfig.ClaudeCode, "linux", getenv, "/home/u/.claude.json"},
		{clientconfig.ClaudeDesktop, "linux", getenv, "/xdg/Claude/claude_desktop_config.json"},
		{clientconfig.ClaudeDesktop, "linux", nil, "/home/u/.config/Claude/claude_desktop_config.json"},
		{clientconfig.ClaudeDesktop, "darwin", getenv, "/home/u/Library/Application Support/Claude/claude_desktop_config.json"},
		{clientconfig.ClaudeDesktop, "windows", getenv, "/appdata/Claude/claude_desktop_config.json"},
		{clientconfig.VSCode, "windows", nil, "/home/u/AppData/Roaming/Code/User/mcp.json"},
		{clientconfig.VSCode, "freebsd", getenv, "/xdg/Code/User/mcp.json"},
		{clientconfig.Cursor, "darwin", getenv, "/home/u/.cursor/mcp.json"},
		{clientconfig.Codex, "linux", getenv, "/home/u/.codex/config.toml"},
		{clientconfig.JSON, "linux", getenv, ""},
	}
	for _, tt := range tests {
		t.Run(string(tt.client)+"/"+tt.goos, func(t *testing.T) {
			got, err := clientconfig.File(tt.client, "/home/u", tt.goos, tt.getenv)
			if err != nil || got != filepath.FromSlash(tt.want) {
				t.Errorf("File = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	if _, err := clientconfig.File("emacs", "/home/u", "linux", nil); err == nil {
		t.Error("an unknown client has a file")
	}
}
