package doccheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRequestPath keeps docs/REQUEST_PATH.md true to the tree: it fails
// when a symbol it names is renamed or moved, or a block it quotes changes.
func TestRequestPath(t *testing.T) {
	root := filepath.Join("..", "..")
	problems, st, err := Check(root, filepath.Join(root, "docs", "REQUEST_PATH.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("docs/REQUEST_PATH.md %s", p)
	}
	// A document that lost its references would pass vacuously.
	if st.References < 40 || st.Quotations < 5 {
		t.Errorf("checked only %d references and %d quotations; the document or the parser lost them", st.References, st.Quotations)
	}
}

// TestArchitecture keeps docs/ARCHITECTURE.md true to the tree in the
// same way.
func TestArchitecture(t *testing.T) {
	root := filepath.Join("..", "..")
	problems, st, err := Check(root, filepath.Join(root, "docs", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("docs/ARCHITECTURE.md %s", p)
	}
	if st.References < 25 {
		t.Errorf("checked only %d references; the document or the parser lost them", st.References)
	}
}

// TestCheckFindsWhatIsGone shows each kind of failure on a small tree.
func TestCheckFindsWhatIsGone(t *testing.T) {
	root := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a/a.go", `package a

type T struct{ Field int }

func (t *T) Method() {}
func (T) Value()     {}
func Free[P any]()   {}

type G[P any] struct{}

func (g *G[P]) M() {}

const C = 1

var V = 2

func quoted() {
	x := 1
	y := 2
	_ = x + y
}
`)
	write("doc.md", "ok: `a/a.go:T` `a/a.go:T.Field` `a/a.go:T.Method` `a/a.go:T.Value` `a/a.go:Free` `a/a.go:G.M` `a/a.go:C` `a/a.go:V`\n"+
		"gone: `a/a.go:T.Gone` `a/a.go:Nope` `a/b.go:T`\n"+
		"```go\n// a/a.go\n\tx := 1\n// …\n\t_ = x + y\n```\n"+
		"```go\n// a/a.go\n\t_ = x + y\n// …\n\tx := 1\n```\n"+
		"```go\n// a/a.go\n\tz := 3\n```\n"+
		"```go\nfunc unattributed() {}\n```\n"+
		"```sh\n`a/a.go:InsideShell` is not a reference\n```\n")
	problems, st, err := Check(root, filepath.Join(root, "doc.md"))
	if err != nil {
		t.Fatal(err)
	}
	if st.References != 11 || st.Quotations != 4 {
		t.Errorf("stats = %+v, want 11 references and 4 quotations", st)
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.String())
	}
	want := []string{
		"line 2: `a/a.go:T.Gone`: a/a.go declares no T.Gone",
		"line 2: `a/a.go:Nope`: a/a.go declares no Nope",
		"line 2: `a/b.go:T`: no such file",
		"line 9: a/a.go: the quoted code \"x := 1\" is no longer in it (in this order)",
		"line 15: a/a.go: the quoted code \"z := 3\" is no longer in it (in this order)",
		"line 19: ```go: a quotation must start with",
	}
	if len(got) != len(want) {
		t.Fatalf("problems:\n%s\nwant %d", strings.Join(got, "\n"), len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("problem %d = %q, want prefix %q", i, got[i], want[i])
		}
	}
}
