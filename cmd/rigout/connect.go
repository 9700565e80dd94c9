package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/rigout/rigout/clientconfig"
	"github.com/rigout/rigout/internal/runstate"
	"github.com/rigout/rigout/internal/shellquote"
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

// connectClientNames are the clients connect knows, in the order usage
// lists them.
func connectClientNames() string {
	var names []string
	for _, c := range clientconfig.Clients() {
		names = append(names, string(c))
	}
	return strings.Join(names, ", ")
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
		fmt.Fprintf(stderr, "rigout connect: want one client, one of: %s\n", connectClientNames())
		return 2
	}
	client, err := clientconfig.ParseClient(pos[0])
	if err != nil {
		fmt.Fprintf(stderr, "rigout connect: %v\n", err)
		return 2
	}
	if clientconfig.CheckName(*name) != nil {
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
	target := *file
	if target == "" {
		home, _ := os.UserHomeDir()
		target, _ = clientconfig.File(client, home, runtime.GOOS, os.Getenv)
	}

	if !ep.Stdio() && ep.Headers["Authorization"] == "" && !*noToken {
		fmt.Fprintf(stderr, "rigout connect: the gateway at %s takes the tokens (or OAuth) of its configuration, and rigout holds no token to put in %s's entry; "+
			"nothing was printed or written, so an entry that works stays as it is.\n"+
			"  Give the client one of your configured tokens yourself, connect over stdio (--transport stdio), "+
			"or pass --no-token for a client that signs in with OAuth.\n", ep.URL, client.Title())
		return 1
	}
	entry, err := clientconfig.NewEntry(client, *name, ep)
	if err != nil {
		fmt.Fprintf(stderr, "rigout connect: %v\n", err)
		return 1
	}
	fmt.Fprint(stdout, entry.Snippet)
	// Codex reads the token from its environment, never from its file.
	for k, v := range entry.Environment {
		fmt.Fprintf(stderr, "Codex reads the token from the environment it starts in:\n  export %s=%s\n", k, shellquote.Quote(v))
	}
	if target != "" {
		fmt.Fprintf(stderr, "%s reads %s (on %s)\n", client.Title(), target, runtime.GOOS)
	}
	if !ep.Stdio() {
		fmt.Fprintln(stderr, "WARNING: this output holds the gateway's bearer token, which can call every tool: keep it out of shared files, chat and version control.")
	}
	if !*write {
		return 0
	}
	if target == "" {
		fmt.Fprintf(stderr, "rigout connect: %s has no configuration file to write; paste the output instead\n", client)
		return 2
	}
	backup, replaced, err := clientconfig.Merge(target, entry)
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
func connectEndpoint(dir, transportName string, explicitDir bool, configPath string) (clientconfig.Endpoint, error) {
	st := runstate.Inspect(dir)
	useHTTP := st.State == runstate.Running
	switch transportName {
	case "":
	case "stdio":
		useHTTP = false
	case "http":
		if !useHTTP {
			return clientconfig.Endpoint{}, fmt.Errorf("--transport http: no gateway is running in %s (%s); start one with `rigout start --detach%s`", dir, st.State, statedir.Flag(dir, nil))
		}
	default:
		return clientconfig.Endpoint{}, fmt.Errorf("--transport %q: want stdio or http", transportName)
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
				return clientconfig.Endpoint{}, err
			}
			args = append(args, "--config", abs)
		}
		return clientconfig.Endpoint{Command: self, Args: args}, nil
	}
	cf := st.Runtime.ConnectionFile
	if cf == "" {
		return clientconfig.Endpoint{URL: st.Runtime.URL}, nil // configured tokens or OAuth: the client brings its own
	}
	b, err := os.ReadFile(cf)
	if err != nil {
		return clientconfig.Endpoint{}, fmt.Errorf("connection file: %w", err)
	}
	var conn struct {
		MCP struct {
			URL     string            `json:"url"`
			Headers map[string]string `json:"headers"`
		} `json:"mcp"`
	}
	if err := json.Unmarshal(b, &conn); err != nil || conn.MCP.URL == "" {
		return clientconfig.Endpoint{}, fmt.Errorf("connection file %s: not rigout's connection data (%v)", cf, err)
	}
	ep := clientconfig.Endpoint{URL: conn.MCP.URL}
	if auth := conn.MCP.Headers["Authorization"]; auth != "" {
		ep.Headers = map[string]string{"Authorization": auth}
	}
	return ep, nil
}
