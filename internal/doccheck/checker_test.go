package doccheck

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestCheckerFindsWhatIsWrong shows each kind of name a Checker verifies,
// right and wrong, on a small module.
func TestCheckerFindsWhatIsWrong(t *testing.T) {
	root := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/m\n\ngo 1.22\n")
	write("a/a.go", `package a

type T struct {
	Field int
	Embedded
}

type Embedded struct{ Inner int }

func (T) Method() {}

func New() *T { return nil }

type Host struct {
	Name string `+"`json:\"name\"`"+`
	Port int    `+"`json:\"port\"`"+`
}

const Event = "audit.chain_key"

const schema = `+"`"+`{"properties": {"wait_seconds": {"type": "integer"}}}`+"`"+`
`)
	write("cmd/x/main.go", `package main

import "flag"

var commands = []string{"serve", "stop"}

func boolArg(args []string, name string) bool { return false }

func main() {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.Bool("json", false, "")
	var dir string
	fs.StringVar(&dir, "state-dir", "", "")
	args := fs.Args()
	_ = boolArg(args, "detach")
}
`)
	write("cmd/x/config.go", `package main

import "example.com/m/a"

type fileConfig struct {
	Audit       fileAudit       `+"`json:\"audit\"`"+`
	Hosts       []a.Host        `+"`json:\"hosts\"`"+`
	Credentials map[string]cred `+"`json:\"credentials\"`"+`
}

type fileAudit struct {
	Postgres string `+"`json:\"postgres\"`"+`
	KeyEnv   string `+"`json:\"key_env\"`"+`
}

type cred struct{ Env string `+"`json:\"env\"`"+` }
`)
	write("other/doc2.md", "# Doc two\n\n## Some Heading (`x`)\n")
	write("doc.md", "# Title\n"+
		"ok: `a.T` `a.T.Method` `a.T.Inner` `T.Field` `a.New()` `exec.Command`\n"+
		"ok: `--json` `rigout --state-dir DIR` `--detach` `audit.postgres` `audit.chain_key` `wait_seconds` `audit.db`\n"+
		"ok: `{\"audit\": {\"key_env\": \"K\"}, \"hosts\": [{\"name\": \"h\"}], \"credentials\": {\"x\": {\"env\": \"E\"}}}` `{\"detail\": 1}`\n"+
		"ok: `cmd/x` `./a/a.go` `example.com/m/a` `~/.ssh/config` [two](other/doc2.md#some-heading-x) [self](#title) [web](https://example.com/x)\n"+
		"gone: `a.Gone` `a.T.Gone` `Nope.Field` `T.Gone`\n"+
		"gone: `--nope` `rigout serve --nope2` `rigout servr`\n"+
		"gone: `audit.postgress` `{\"audit\": {\"keyenv\": \"K\"}, \"hosts\": [{\"nam\": \"h\"}]}` `wait_secs`\n"+
		"gone: `a/missing.go` [x](other/none.md) [y](other/doc2.md#nowhere) [z](#nowhere)\n"+
		"prose: `--foreign`\n"+
		"```go\n// sketch\nt := a.New()\n_ = a.T{Field: 1, Gone: 2}\n_ = a.Missing\n```\n"+
		"```sh\nrigout --json --nope3   # --ignored in a comment\n```\n"+
		"```json\n{\"audit\": {\"postgres\": \"x\", \"bogus\": 1}}\n```\n"+
		"```json\n{\"mcpServers\": {\"x\": {}}}\n```\n")
	c, err := NewChecker(root, Options{
		Schema: TypeRef{Dir: "cmd/x", Name: "fileConfig"},
		Prose:  map[string]string{"--foreign": "another program's", "--unused": "a span no document has"},
	})
	if err != nil {
		t.Fatal(err)
	}
	problems, st, err := c.Check(filepath.Join(root, "doc.md"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.String())
	}
	want := []string{
		"line 6: `a.Gone`: no package a of this module declares Gone",
		"line 6: `a.T.Gone`: a.T has no field or method Gone",
		"line 6: `Nope.Field`: this module declares no type Nope",
		"line 6: `T.Gone`: no type T of this module has a field or method Gone",
		"line 7: `--nope`: no program of this module defines the flag --nope",
		"line 7: `rigout serve --nope2`: no program of this module defines the flag --nope2",
		"line 7: `rigout servr`: the code has no subcommand \"servr\"",
		"line 8: `audit.postgress`: the configuration file has no key audit.postgress, and the code has no string \"audit.postgress\"",
		"line 8: `{\"audit\": {\"keyenv\": \"K\"}, \"hosts\": [{\"nam\": \"h\"}]}`: the configuration file has no key audit.keyenv",
		"line 8: `{\"audit\": {\"keyenv\": \"K\"}, \"hosts\": [{\"nam\": \"h\"}]}`: the configuration file has no key hosts.nam",
		"line 8: `wait_secs`: no string or struct tag of this module has the word wait_secs",
		"line 9: `a/missing.go`: no such file or directory a/missing.go in the tree",
		"line 9: other/none.md: the link's file does not exist",
		"line 9: other/doc2.md#nowhere: doc2.md has no heading with the anchor #nowhere",
		"line 9: #nowhere: doc.md has no heading with the anchor #nowhere",
		"line 14: a.T{Gone}: a.T has no field Gone",
		"line 15: `a.Missing`: no package a of this module declares Missing",
		"line 18: `rigout --json --nope3   # --ignored in a comment`: no program of this module defines the flag --nope3",
		"line 20: ```json: the configuration file has no key audit.bogus",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if st.Prose != 1 || st.Symbols < 9 || st.Flags != 9 || st.Links != 5 {
		t.Errorf("stats = %+v", st)
	}
	if u := c.Unused(); !reflect.DeepEqual(u, []string{"--unused"}) {
		t.Errorf("Unused() = %q, want [--unused]", u)
	}
	if _, err := NewChecker(root, Options{Schema: TypeRef{Dir: "cmd/x", Name: "noSuchType"}}); err == nil {
		t.Error("NewChecker accepted a schema type that does not exist")
	}
}
