package doccheck

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// docsOptions is what the checker of this repository's documents knows:
// the configuration file's schema, and the spans that only look like
// names of this tree, each with its reason.
var docsOptions = Options{
	Schema: TypeRef{Dir: "config", Name: "File"},
	Prose: map[string]string{
		"tools/list":                      "an MCP method, not a path under tools/",
		"tools/call":                      "an MCP method, not a path under tools/",
		"Type.Method":                     "the notation, not a name",
		"Type.Field":                      "the notation, not a name",
		".ci/artifacts/activity-page.png": "an artifact CI writes, not a file of the tree",
		"--quick":                         "a flag of the benchmark harness, cd bench && go run . (its own module)",
		"--config-env=KEY=VAR":            "git's option, which the policy judges",
		"--overwrite":                     "another program's option, which the policy judges",
		"--spec-version 2025-11-25":       "the MCP conformance suite's option",
		"--set":                           "date's option, which the read-only table judges",
		"--no-index --find-links":         "pip's options",
		"--interactive":                   "docker's option, which docker_operations passes",
		"--rm":                            "docker's option, which docker_operations passes",
		"--tag":                           "docker's option, which docker_operations passes",
		"--tail":                          "docker's option, which docker_operations passes",
		"--privileged":                    "docker's option, which docker_operations refuses",
		"env_reset":                       "sudo's setting",
		"list_changed":                    "MCP's notifications/tools/list_changed, which mcp-go spells",
		"command_not_found_handle":        "bash's hook",
		"test_streaming_elicitation":      "a test of the MCP conformance suite",
		"test_missing_capability":         "a test of the MCP conformance suite",
		"connect_hardware":                "the tool of the program rigout replaces, which rigout does not serve",
		"f_bavail":                        "statvfs's field",
		"memfd_create":                    "a Linux system call (x/sys spells it MemfdCreate)",
	},
}

// documents lists README.md and every Markdown file under docs/.
func documents(t *testing.T, root string) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(docs)
	return append([]string{filepath.Join(root, "README.md")}, docs...)
}

// TestDocs keeps README.md and every document under docs/ true to the
// tree: each Go symbol, flag, configuration key, path and link they name
// must exist. Run with -v for the count per document.
func TestDocs(t *testing.T) {
	root := filepath.Join("..", "..")
	c, err := NewChecker(root, docsOptions)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(c.Flags()); n < 40 {
		t.Fatalf("found only %d flags in the tree; the flag scan is broken", n)
	}
	var total Stats
	for _, doc := range documents(t, root) {
		rel, _ := filepath.Rel(root, doc)
		problems, st, err := c.Check(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range problems {
			t.Errorf("%s:%d: %s: %s", rel, p.Line, p.Ref, p.Why)
		}
		t.Logf("%-28s %4d checked: %3d symbols %3d flags %3d keys %3d names %3d paths %3d links %3d references %2d quotations (%d prose)",
			rel, st.Total(), st.Symbols, st.Flags, st.Keys, st.Names, st.Paths, st.Links, st.References, st.Quotations, st.Prose)
		total.add(st)
	}
	t.Logf("all: %d checked (%+v)", total.Total(), total)
	// Documents that lost their names, or a checker that stopped seeing
	// them, would pass vacuously.
	if total.Symbols < 100 || total.Flags < 50 || total.Keys < 20 || total.Names < 200 || total.Paths < 50 || total.Links < 50 {
		t.Errorf("checked too little: %+v", total)
	}
	for _, k := range c.Unused() {
		t.Errorf("Prose excuses %q, which no document names any more: remove the entry", k)
	}
}

// TestREADMEListsEveryDependency keeps the README's dependency table
// complete: each module go.mod requires directly has a row saying why.
func TestREADMEListsEveryDependency(t *testing.T) {
	root := filepath.Join("..", "..")
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, deps, ok := strings.Cut(string(readme), "\n## Dependencies\n")
	if !ok {
		t.Fatal("README.md has no ## Dependencies section")
	}
	direct := 0
	inRequire := false
	for _, l := range strings.Split(string(mod), "\n") {
		l = strings.TrimSpace(l)
		switch {
		case l == "require (":
			inRequire = true
			continue
		case l == ")":
			inRequire = false
			continue
		case strings.HasPrefix(l, "require "):
			l = strings.TrimPrefix(l, "require ")
		case !inRequire:
			continue
		}
		f := strings.Fields(l)
		if len(f) < 2 || strings.Contains(l, "// indirect") {
			continue
		}
		direct++
		if !strings.Contains(deps, "`"+f[0]+"`") {
			t.Errorf("go.mod requires %s, which the README's Dependencies table does not list with why", f[0])
		}
	}
	if direct < 10 {
		t.Errorf("found only %d direct requirements in go.mod; the parse is broken", direct)
	}
}

// TestREADMECommands keeps the README's two commands what they are: the
// first sh block under "## Run it" runs the binary, the one under
// "## Test it" is the test command, which CI runs (with -race).
func TestREADMECommands(t *testing.T) {
	root := filepath.Join("..", "..")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ section, want string }{
		{"## Run it", "go run ./cmd/rigout serve"},
		{"## Test it", "go test ./..."},
	} {
		_, rest, ok := strings.Cut(string(readme), "\n"+c.section+"\n")
		if !ok {
			t.Errorf("README.md has no %s section", c.section)
			continue
		}
		_, block, ok := strings.Cut(rest, "```sh\n")
		block, _, ok2 := strings.Cut(block, "```")
		if !ok || !ok2 || strings.TrimSpace(block) != c.want {
			t.Errorf("the sh block under %s is %q, want %q", c.section, strings.TrimSpace(block), c.want)
		}
	}
	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, l := range strings.Split(string(ci), "\n") {
		f := strings.Fields(l)
		if len(f) > 2 && f[0] == "go" && f[1] == "test" && f[len(f)-1] == "./..." && strings.Contains(l, "-race") {
			found = true
		}
	}
	if !found {
		t.Error(".ci/run no longer runs the README's test command (go test -race ... ./...)")
	}
}
