package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/rigout/rigout/internal/runstate"
	"github.com/rigout/rigout/internal/statedir"
)

const connectUsage = `usage: rigout connect CLIENT [flags]

Print what CLIENT needs to reach rigout: a command line or the JSON (TOML
for codex) block for its configuration file, and where that file lives on
this OS. CLIENT is one of: claude-code, claude-desktop, cursor, vscode,
codex, json (the connection data for an SDK client).

With a gateway running in the state directory (rigout start --detach) the
snippet reaches its HTTP endpoint with the token from the connection file,
so it holds a secret; otherwise it starts rigout over stdio (no secret).
--write merges the entry into the client's file after a backup, keeping
every other server.

Flags:
`

// connectClients are the clients connect knows, in the order usage lists them.
var connectClients = []string{"claude-code", "claude-desktop", "cursor", "vscode", "codex", "json"}

// endpoint is what a client is told to connect to.
type endpoint struct {
	stdio   bool
	command string   // stdio
	args    []string // stdio
	url     string   // http
	auth    string   // http: the Authorization header value, "" when none
}

// runConnect is `rigout connect CLIENT`.
func runConnect(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("rigout connect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(fs.Output(), connectUsage); fs.PrintDefaults() }
	stateDir := fs.String("state-dir", "", "state directory of the gateway (default $RIGOUT_STATE_DIR, else the per-user default)")
	transportName := fs.String("transport", "", "stdio or http (default: http when a gateway is running, else stdio)")
	name := fs.String("name", "rigout", "the server's name in the client's configuration")
	write := fs.Bool("write", false, "merge the entry into the client's configuration file (a backup is kept beside it)")
	file := fs.String("file", "", "the client's configuration file for --write (default: the client's own, printed below)")
	configPath := fs.String("config", "", "stdio: the --config the client's rigout stdio is started with")
	noToken := fs.Bool("no-token", false, "http: write the entry without a token, for a client that signs in with OAuth")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if len(pos) != 1 {
		fmt.Fprintf(stderr, "rigout connect: want one client, one of: %s\n", strings.Join(connectClients, ", "))
		return 2
	}
	client := pos[0]
	known := false
	for _, c := range connectClients {
		known = known || c == client
	}
	if !known {
		fmt.Fprintf(stderr, "rigout connect: unknown client %q; want one of: %s\n", client, strings.Join(connectClients, ", "))
		return 2
	}
	if *name == "" || strings.ContainsAny(*name, " \t\n\"'[]=.") {
		fmt.Fprintf(stderr, "rigout connect: --name %q: want a plain name such as rigout\n", *name)
		return 2
	}
	dir, err := statedir.Resolve(*stateDir, nil)
	if err != nil {
		fmt.Fprintf(stderr, "rigout connect: %v\n", err)
		return 1
	}
	ep, err := connectEndpoint(dir, *transportName, *stateDir != "", *configPath)
	if err != nil {
		fmt.Fprintf(stderr, "rigout connect: %v\n", err)
		return 1
	}
	home, _ := os.UserHomeDir()
	target := *file
	if target == "" {
		target = clientFile(client, home, runtime.GOOS)
	}

	if !ep.stdio && ep.auth == "" && !*noToken {
		fmt.Fprintf(stderr, "rigout connect: the gateway at %s takes the tokens (or OAuth) of its configuration, and rigout holds no token to put in %s's entry; "+
			"nothing was printed or written, so an entry that works stays as it is.\n"+
			"  Give the client one of your configured tokens yourself, connect over stdio (--transport stdio), "+
			"or pass --no-token for a client that signs in with OAuth.\n", ep.url, clientTitle(client))
		return 1
	}
	snippet, entry := renderClient(client, *name, ep)
	fmt.Fprint(stdout, snippet)
	if client == "codex" && ep.auth != "" {
		// The token goes where Codex reads it, the environment, never
		// into its file.
		token, _ := strings.CutPrefix(ep.auth, "Bearer ")
		fmt.Fprintf(stderr, "Codex reads the token from the environment it starts in:\n  export %s=%s\n", codexTokenVar, shellQuote(token))
	}
	if target != "" {
		fmt.Fprintf(stderr, "%s reads %s (on %s)\n", clientTitle(client), target, runtime.GOOS)
	}
	if !ep.stdio {
		fmt.Fprintln(stderr, "WARNING: this output holds the gateway's bearer token, which can call every tool: keep it out of shared files, chat and version control.")
	}
	if !*write {
		return 0
	}
	if target == "" {
		fmt.Fprintf(stderr, "rigout connect: %s has no configuration file to write; paste the output instead\n", client)
		return 2
	}
	backup, replaced, err := mergeClientFile(client, target, *name, entry, snippet)
	if err != nil {
		fmt.Fprintf(stderr, "rigout connect: --write %s: %v; nothing was changed\n", target, err)
		return 1
	}
	if backup != "" {
		fmt.Fprintf(stderr, "backup: %s\n", backup)
	}
	verb := "added"
	if replaced {
		verb = "replaced"
	}
	fmt.Fprintf(stderr, "%s %q in %s (owner-only); other servers kept\n", verb, *name, target)
	return 0
}

// connectEndpoint chooses stdio or the running gateway's HTTP endpoint.
func connectEndpoint(dir, transportName string, explicitDir bool, configPath string) (endpoint, error) {
	st := runstate.Inspect(dir)
	useHTTP := st.State == runstate.Running
	switch transportName {
	case "":
	case "stdio":
		useHTTP = false
	case "http":
		if !useHTTP {
			return endpoint{}, fmt.Errorf("--transport http: no gateway is running in %s (%s); start one with `rigout start --detach%s`", dir, st.State, stateDirArg(dir))
		}
	default:
		return endpoint{}, fmt.Errorf("--transport %q: want stdio or http", transportName)
	}
	if !useHTTP {
		self, err := os.Executable()
		if err != nil || strings.Contains(self, "/go-build") {
			self = "rigout" // go run's binary does not outlive it
		}
		args := []string{"stdio"}
		if explicitDir {
			args = append(args, "--state-dir", dir)
		}
		if configPath != "" {
			abs, err := filepath.Abs(configPath)
			if err != nil {
				return endpoint{}, err
			}
			args = append(args, "--config", abs)
		}
		return endpoint{stdio: true, command: self, args: args}, nil
	}
	cf := st.Runtime.ConnectionFile
	if cf == "" {
		return endpoint{url: st.Runtime.URL}, nil // configured tokens or OAuth: the client brings its own
	}
	b, err := os.ReadFile(cf)
	if err != nil {
		return endpoint{}, fmt.Errorf("connection file: %w", err)
	}
	var conn struct {
		MCP struct {
			URL     string            `json:"url"`
			Headers map[string]string `json:"headers"`
		} `json:"mcp"`
	}
	if err := json.Unmarshal(b, &conn); err != nil || conn.MCP.URL == "" {
		return endpoint{}, fmt.Errorf("connection file %s: not rigout's connection data (%v)", cf, err)
	}
	return endpoint{url: conn.MCP.URL, auth: conn.MCP.Headers["Authorization"]}, nil
}

func clientTitle(client string) string {
	return map[string]string{"claude-code": "Claude Code", "claude-desktop": "Claude Desktop", "cursor": "Cursor",
		"vscode": "VS Code", "codex": "Codex", "json": "An SDK client"}[client]
}

// clientFile is where client keeps its MCP servers for this user on goos.
func clientFile(client, home, goos string) string {
	appData := func(rest ...string) string {
		switch goos {
		case "darwin":
			return filepath.Join(append([]string{home, "Library", "Application Support"}, rest...)...)
		case "windows":
			base := os.Getenv("APPDATA")
			if base == "" {
				base = filepath.Join(home, "AppData", "Roaming")
			}
			return filepath.Join(append([]string{base}, rest...)...)
		}
		base := os.Getenv("XDG_CONFIG_HOME")
		if base == "" {
			base = filepath.Join(home, ".config")
		}
		return filepath.Join(append([]string{base}, rest...)...)
	}
	switch client {
	case "claude-code":
		return filepath.Join(home, ".claude.json")
	case "claude-desktop":
		return appData("Claude", "claude_desktop_config.json")
	case "cursor":
		return filepath.Join(home, ".cursor", "mcp.json")
	case "vscode":
		return appData("Code", "User", "mcp.json")
	case "codex":
		return filepath.Join(home, ".codex", "config.toml")
	}
	return ""
}

// codexTokenVar is the variable Codex reads the bearer token from: Codex
// takes no token in its file.
const codexTokenVar = "RIGOUT_MCP_TOKEN"

// renderClient returns what connect prints for client, and the entry
// --write merges under name (nil for clients without a JSON file).
func renderClient(client, name string, ep endpoint) (string, map[string]any) {
	headers := map[string]any{}
	if ep.auth != "" {
		headers["Authorization"] = ep.auth
	}
	jsonBlock := func(top string, entry map[string]any) string {
		b, _ := json.MarshalIndent(map[string]any{top: map[string]any{name: entry}}, "", "  ")
		return string(b) + "\n"
	}
	switch client {
	case "claude-code":
		var entry map[string]any
		var line string
		if ep.stdio {
			entry = map[string]any{"type": "stdio", "command": ep.command, "args": ep.args}
			line = "claude mcp add " + shellQuote(name) + " -- " + shellQuote(ep.command) + " " + shellJoin(ep.args)
		} else {
			entry = map[string]any{"type": "http", "url": ep.url, "headers": headers}
			line = "claude mcp add --transport http " + shellQuote(name) + " " + shellQuote(ep.url)
			if ep.auth != "" {
				line += " --header " + shellQuote("Authorization: "+ep.auth)
			}
		}
		return line + "\n", entry
	case "claude-desktop":
		// Claude Desktop's file starts local servers only: over HTTP it
		// goes through mcp-remote, the header passed in its environment.
		if ep.stdio {
			entry := map[string]any{"command": ep.command, "args": ep.args}
			return jsonBlock("mcpServers", entry), entry
		}
		args := []any{"-y", "mcp-remote", ep.url}
		entry := map[string]any{"command": "npx", "args": args}
		if ep.auth != "" {
			entry["args"] = append(args, "--header", "Authorization:${RIGOUT_AUTH_HEADER}")
			entry["env"] = map[string]any{"RIGOUT_AUTH_HEADER": ep.auth}
		}
		return jsonBlock("mcpServers", entry), entry
	case "cursor":
		entry := map[string]any{"command": ep.command, "args": ep.args}
		if !ep.stdio {
			entry = map[string]any{"url": ep.url, "headers": headers}
		}
		return jsonBlock("mcpServers", entry), entry
	case "vscode":
		entry := map[string]any{"type": "stdio", "command": ep.command, "args": ep.args}
		if !ep.stdio {
			entry = map[string]any{"type": "http", "url": ep.url, "headers": headers}
		}
		return jsonBlock("servers", entry), entry
	case "codex":
		return codexTable(name, ep), nil
	}
	// json: the connection data an SDK client needs.
	entry := map[string]any{"transport": "stdio", "command": ep.command, "args": ep.args}
	if !ep.stdio {
		entry = map[string]any{"transport": "streamable-http", "url": ep.url, "headers": headers}
	}
	b, _ := json.MarshalIndent(entry, "", "  ")
	return string(b) + "\n", nil
}

// codexTable is Codex's TOML table for the server, with the export line
// that hands it the token.
//
// required makes Codex say so when it cannot start or reach rigout (the
// token variable unset, say) instead of going on without it; the approval
// mode lets `codex exec` (approval policy never) call the tools that are
// not read-only: rigout's own scopes, policy and confirmations are the gate.
func codexTable(name string, ep endpoint) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[mcp_servers.%s]\nrequired = true\ndefault_tools_approval_mode = \"approve\"\n", name)
	if ep.stdio {
		fmt.Fprintf(&b, "command = %s\n", tomlString(ep.command))
		quoted := make([]string, len(ep.args))
		for i, a := range ep.args {
			quoted[i] = tomlString(a)
		}
		fmt.Fprintf(&b, "args = [%s]\n", strings.Join(quoted, ", "))
		return b.String()
	}
	fmt.Fprintf(&b, "url = %s\n", tomlString(ep.url))
	if strings.HasPrefix(ep.auth, "Bearer ") {
		fmt.Fprintf(&b, "bearer_token_env_var = %s\n", tomlString(codexTokenVar))
	}
	return b.String()
}

// tomlString is s as a TOML basic string (JSON's escapes are TOML's).
func tomlString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

// mergeClientFile puts entry under name in the client's file, keeping
// everything else, after copying the file to a timestamped backup. It
// reports the backup's path ("" for a new file) and whether an entry of
// that name was replaced. A file that does not parse is left alone.
func mergeClientFile(client, path, name string, entry map[string]any, snippet string) (backup string, replaced bool, err error) {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", false, err
	}
	var out []byte
	if client == "codex" {
		out, replaced = mergeTOMLTable(old, "mcp_servers."+name, snippet)
	} else {
		top := "mcpServers"
		if client == "vscode" {
			top = "servers"
		}
		if out, replaced, err = mergeJSONServer(old, top, name, entry); err != nil {
			return "", false, err
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", false, err
	}
	if len(old) > 0 {
		backup = fmt.Sprintf("%s.bak-%s", path, time.Now().UTC().Format("20060102T150405.000"))
		if err := runstate.WriteFileAtomic(backup, old); err != nil {
			return "", false, fmt.Errorf("backup: %w", err)
		}
	}
	return backup, replaced, runstate.WriteFileAtomic(path, out)
}

// mergeJSONServer sets doc[top][name] = entry in the JSON object doc (an
// empty doc is {}), keeping every other key.
func mergeJSONServer(doc []byte, top, name string, entry map[string]any) ([]byte, bool, error) {
	root := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(doc)) > 0 {
		if err := json.Unmarshal(doc, &root); err != nil {
			return nil, false, fmt.Errorf("not a JSON object (comments and trailing commas are not read): %w", err)
		}
	}
	servers := map[string]json.RawMessage{}
	if raw, ok := root[top]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &servers); err != nil {
			return nil, false, fmt.Errorf("%q is not an object: %w", top, err)
		}
	}
	_, replaced := servers[name]
	e, err := json.Marshal(entry)
	if err != nil {
		return nil, false, err
	}
	servers[name] = e
	if root[top], err = json.Marshal(servers); err != nil {
		return nil, false, err
	}
	out, err := json.MarshalIndent(root, "", "  ")
	if err != nil {
		return nil, false, err
	}
	return append(out, '\n'), replaced, nil
}

// mergeTOMLTable replaces the table [header] in doc (from its header line
// to the next table header) with table, or appends table; every other
// line stays as it was.
func mergeTOMLTable(doc []byte, header, table string) ([]byte, bool) {
	lines := strings.SplitAfter(string(doc), "\n")
	var out strings.Builder
	replaced, skipping := false, false
	for _, l := range lines {
		t := strings.TrimSpace(l)
		isHeader := strings.HasPrefix(t, "[")
		if isHeader {
			h := strings.Trim(strings.SplitN(t, "#", 2)[0], "[] \t")
			switch {
			case h == header:
				skipping, replaced = true, true
				out.WriteString(table)
				continue
			case skipping && strings.HasPrefix(h, header+"."):
				continue // a sub-table of ours, such as [mcp_servers.rigout.env]
			default:
				skipping = false
			}
		}
		if !skipping {
			out.WriteString(l)
		}
	}
	s := out.String()
	if !replaced {
		if s != "" && !strings.HasSuffix(s, "\n") {
			s += "\n"
		}
		if s != "" {
			s += "\n"
		}
		s += table
	}
	return []byte(s), replaced
}
