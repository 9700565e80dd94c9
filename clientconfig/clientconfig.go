package clientconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rigout/rigout/internal/shellquote"
)

// A Client is an MCP client whose entry this package renders.
type Client string

// The clients, in the order [Clients] lists them.
const (
	ClaudeCode    Client = "claude-code"    // Claude Code: a `claude mcp add` line; ~/.claude.json
	ClaudeDesktop Client = "claude-desktop" // Claude Desktop: mcpServers, HTTP through mcp-remote
	Cursor        Client = "cursor"         // Cursor: mcpServers in ~/.cursor/mcp.json
	VSCode        Client = "vscode"         // VS Code: servers in the user's mcp.json
	Codex         Client = "codex"          // Codex: a [mcp_servers.NAME] table in ~/.codex/config.toml
	JSON          Client = "json"           // an SDK client: the connection data alone, no file
)

// Clients returns the known clients, in the order `rigout connect` lists
// them. The slice is the caller's.
func Clients() []Client {
	return []Client{ClaudeCode, ClaudeDesktop, Cursor, VSCode, Codex, JSON}
}

// ParseClient returns the client named s, or an [*UnknownClientError].
func ParseClient(s string) (Client, error) {
	c := Client(s)
	if !slices.Contains(Clients(), c) {
		return "", &UnknownClientError{Name: s}
	}
	return c, nil
}

// Title is the client's name as people write it ("Claude Code"), "" for an
// unknown client.
func (c Client) Title() string {
	switch c {
	case ClaudeCode:
		return "Claude Code"
	case ClaudeDesktop:
		return "Claude Desktop"
	case Cursor:
		return "Cursor"
	case VSCode:
		return "VS Code"
	case Codex:
		return "Codex"
	case JSON:
		return "An SDK client"
	}
	return ""
}

// UnknownClientError is a client name this package does not know.
type UnknownClientError struct {
	Name string // the name asked for
}

// Error names the client and lists the known ones.
func (e *UnknownClientError) Error() string {
	names := make([]string, 0, 6)
	for _, c := range Clients() {
		names = append(names, string(c))
	}
	return fmt.Sprintf("unknown client %q; want one of: %s", e.Name, strings.Join(names, ", "))
}

// ErrName is a server name that cannot be a key of every client's file
// and a TOML table name: empty, or holding a space, a quote, a bracket,
// '=' or '.'.
var ErrName = errors.New("clientconfig: want a plain server name such as rigout")

// CheckName returns [ErrName] when name cannot name a server in every
// client's configuration.
func CheckName(name string) error {
	if name == "" || strings.ContainsAny(name, " \t\n\"'[]=.") {
		return ErrName
	}
	return nil
}

// ErrEndpoint is an [Endpoint] that is neither a command nor a URL, or both.
var ErrEndpoint = errors.New("clientconfig: an endpoint is a Command (stdio) or a URL (HTTP), exactly one")

// CodexTokenVar is the environment variable the Codex entry tells Codex to
// read the bearer token from: Codex's file never holds the token.
const CodexTokenVar = "RIGOUT_MCP_TOKEN"

// An Endpoint is what a client connects to: a program it starts and speaks
// to over stdio, or a streamable HTTP URL. Exactly one of Command and URL
// is set.
type Endpoint struct {
	// Command is the program a stdio client starts, Args its arguments
	// and Env the variables it adds to the program's environment.
	Command string
	Args    []string
	Env     map[string]string

	// URL is the streamable HTTP endpoint, Headers what each request
	// carries; "Authorization" holds the bearer token, if any.
	URL     string
	Headers map[string]string
}

// Stdio reports whether the client starts the server itself.
func (ep Endpoint) Stdio() bool { return ep.Command != "" }

// An Entry is an [Endpoint] rendered for one client under one name.
type Entry struct {
	// Client and Name are what the entry was made for.
	Client Client
	Name   string

	// Snippet is what a person pastes: a `claude mcp add` command line
	// (Claude Code), a JSON block of the client's file, Codex's TOML
	// table, or the connection data (JSON). It ends in a newline.
	Snippet string

	// Server is the value under Name in the client's JSON file, nil for
	// Codex (whose table is the Snippet) and the JSON client (no file).
	Server map[string]any

	// Environment holds the variables the client must find in the
	// environment it starts in: Codex's [CodexTokenVar] and the token.
	// Nil for the other clients.
	Environment map[string]string
}

// NewEntry renders ep for client under name. It fails for an unknown
// client ([*UnknownClientError]), a name [CheckName] refuses, an endpoint
// that is not exactly one of stdio and HTTP ([ErrEndpoint]), and, for
// Codex, an Authorization header that is not a bearer token (Codex would
// need it in its file).
func NewEntry(client Client, name string, ep Endpoint) (Entry, error) {
	if _, err := ParseClient(string(client)); err != nil {
		return Entry{}, err
	}
	if err := CheckName(name); err != nil {
		return Entry{}, err
	}
	if (ep.Command == "") == (ep.URL == "") {
		return Entry{}, ErrEndpoint
	}
	e := Entry{Client: client, Name: name}
	switch client {
	case ClaudeCode:
		e.Snippet, e.Server = claudeCode(name, ep)
	case ClaudeDesktop:
		e.Server = claudeDesktop(ep)
		e.Snippet = jsonBlock("mcpServers", name, e.Server)
	case Cursor:
		e.Server = map[string]any{"command": ep.Command, "args": ep.Args}
		if !ep.Stdio() {
			e.Server = map[string]any{"url": ep.URL, "headers": anyMap(ep.Headers)}
		}
		addEnv(e.Server, ep)
		e.Snippet = jsonBlock("mcpServers", name, e.Server)
	case VSCode:
		e.Server = map[string]any{"type": "stdio", "command": ep.Command, "args": ep.Args}
		if !ep.Stdio() {
			e.Server = map[string]any{"type": "http", "url": ep.URL, "headers": anyMap(ep.Headers)}
		}
		addEnv(e.Server, ep)
		e.Snippet = jsonBlock("servers", name, e.Server)
	case Codex:
		var err error
		if e.Snippet, e.Environment, err = codexTable(name, ep); err != nil {
			return Entry{}, err
		}
	case JSON:
		data := map[string]any{"transport": "stdio", "command": ep.Command, "args": ep.Args}
		if !ep.Stdio() {
			data = map[string]any{"transport": "streamable-http", "url": ep.URL, "headers": anyMap(ep.Headers)}
		}
		addEnv(data, ep)
		b, _ := json.MarshalIndent(data, "", "  ")
		e.Snippet = string(b) + "\n"
	}
	return e, nil
}

// File is where client keeps its MCP servers for the user whose home is
// home, on goos (a GOOS value: "linux", "darwin", "windows", …). getenv
// reads XDG_CONFIG_HOME (Linux and the BSDs) and APPDATA (Windows); nil
// reads neither and uses their defaults under home. The JSON client has no
// file: "".
func File(client Client, home, goos string, getenv func(string) string) (string, error) {
	if _, err := ParseClient(string(client)); err != nil {
		return "", err
	}
	env := func(k string) string {
		if getenv == nil {
			return ""
		}
		return getenv(k)
	}
	appData := func(rest ...string) string {
		switch goos {
		case "darwin":
			return filepath.Join(append([]string{home, "Library", "Application Support"}, rest...)...)
		case "windows":
			base := env("APPDATA")
			if base == "" {
				base = filepath.Join(home, "AppData", "Roaming")
			}
			return filepath.Join(append([]string{base}, rest...)...)
		}
		base := env("XDG_CONFIG_HOME")
		if base == "" {
			base = filepath.Join(home, ".config")
		}
		return filepath.Join(append([]string{base}, rest...)...)
	}
	switch client {
	case ClaudeCode:
		return filepath.Join(home, ".claude.json"), nil
	case ClaudeDesktop:
		return appData("Claude", "claude_desktop_config.json"), nil
	case Cursor:
		return filepath.Join(home, ".cursor", "mcp.json"), nil
	case VSCode:
		return appData("Code", "User", "mcp.json"), nil
	case Codex:
		return filepath.Join(home, ".codex", "config.toml"), nil
	}
	return "", nil
}

func claudeCode(name string, ep Endpoint) (string, map[string]any) {
	if ep.Stdio() {
		entry := map[string]any{"type": "stdio", "command": ep.Command, "args": ep.Args}
		addEnv(entry, ep)
		line := "claude mcp add " + shellquote.Quote(name)
		for _, k := range sortedKeys(ep.Env) {
			line += " --env " + shellquote.Quote(k+"="+ep.Env[k])
		}
		return line + " -- " + shellquote.Quote(ep.Command) + " " + shellquote.Join(ep.Args) + "\n", entry
	}
	entry := map[string]any{"type": "http", "url": ep.URL, "headers": anyMap(ep.Headers)}
	line := "claude mcp add --transport http " + shellquote.Quote(name) + " " + shellquote.Quote(ep.URL)
	for _, k := range sortedKeys(ep.Headers) {
		line += " --header " + shellquote.Quote(k+": "+ep.Headers[k])
	}
	return line + "\n", entry
}

// claudeDesktop is Claude Desktop's entry. Its file starts local servers
// only: over HTTP it goes through mcp-remote, each header passed in the
// environment (Authorization as RIGOUT_AUTH_HEADER) so that no secret is
// on a command line.
func claudeDesktop(ep Endpoint) map[string]any {
	if ep.Stdio() {
		entry := map[string]any{"command": ep.Command, "args": ep.Args}
		addEnv(entry, ep)
		return entry
	}
	args := []any{"-y", "mcp-remote", ep.URL}
	entry := map[string]any{"command": "npx", "args": args}
	if len(ep.Headers) == 0 {
		return entry
	}
	env := map[string]any{}
	for _, k := range sortedKeys(ep.Headers) {
		v := headerVar(k)
		args = append(args, "--header", k+":${"+v+"}")
		env[v] = ep.Headers[k]
	}
	entry["args"], entry["env"] = args, env
	return entry
}

// headerVar is the variable Claude Desktop's mcp-remote reads header k
// from.
func headerVar(k string) string {
	if strings.EqualFold(k, "Authorization") {
		return "RIGOUT_AUTH_HEADER"
	}
	return "RIGOUT_HEADER_" + strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return r
		}
		return '_'
	}, k)
}

// codexTable is Codex's TOML table for the server, and the environment
// that hands it the token.
//
// required makes Codex say so when it cannot start or reach the server
// (the token variable unset, say) instead of going on without it; the
// approval mode lets `codex exec` (approval policy never) call the tools
// that are not read-only: the server's own scopes, policy and
// confirmations are the gate.
func codexTable(name string, ep Endpoint) (string, map[string]string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "[mcp_servers.%s]\nrequired = true\ndefault_tools_approval_mode = \"approve\"\n", name)
	if ep.Stdio() {
		fmt.Fprintf(&b, "command = %s\n", tomlString(ep.Command))
		quoted := make([]string, len(ep.Args))
		for i, a := range ep.Args {
			quoted[i] = tomlString(a)
		}
		fmt.Fprintf(&b, "args = [%s]\n", strings.Join(quoted, ", "))
		if len(ep.Env) > 0 {
			fmt.Fprintf(&b, "env = %s\n", tomlInline(ep.Env))
		}
		return b.String(), nil, nil
	}
	fmt.Fprintf(&b, "url = %s\n", tomlString(ep.URL))
	var env map[string]string
	other := map[string]string{}
	for k, v := range ep.Headers {
		if !strings.EqualFold(k, "Authorization") {
			other[k] = v
			continue
		}
		token, ok := strings.CutPrefix(v, "Bearer ")
		if !ok {
			return "", nil, fmt.Errorf("clientconfig: codex takes a bearer token only (from %s), not an Authorization header of scheme %q", CodexTokenVar, firstWord(v))
		}
		fmt.Fprintf(&b, "bearer_token_env_var = %s\n", tomlString(CodexTokenVar))
		env = map[string]string{CodexTokenVar: token}
	}
	if len(other) > 0 {
		fmt.Fprintf(&b, "http_headers = %s\n", tomlInline(other))
	}
	return b.String(), env, nil
}

func firstWord(s string) string {
	w, _, _ := strings.Cut(s, " ")
	return w
}

// tomlString is s as a TOML basic string (JSON's escapes are TOML's).
func tomlString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// tomlInline is m as a TOML inline table with quoted keys, in key order.
func tomlInline(m map[string]string) string {
	kv := make([]string, 0, len(m))
	for _, k := range sortedKeys(m) {
		kv = append(kv, tomlString(k)+" = "+tomlString(m[k]))
	}
	return "{ " + strings.Join(kv, ", ") + " }"
}

func jsonBlock(top, name string, entry map[string]any) string {
	b, _ := json.MarshalIndent(map[string]any{top: map[string]any{name: entry}}, "", "  ")
	return string(b) + "\n"
}

// addEnv puts a stdio endpoint's Env into entry as "env".
func addEnv(entry map[string]any, ep Endpoint) {
	if ep.Stdio() && len(ep.Env) > 0 {
		entry["env"] = anyMap(ep.Env)
	}
}

func anyMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
