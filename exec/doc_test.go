package exec_test

import (
	"go/ast"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// goFiles parses the Go files of dir, test files or the others.
func goFiles(t *testing.T, dir string, tests bool) (map[string]*ast.File, map[string][]byte) {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	files, srcs := map[string]*ast.File{}, map[string][]byte{}
	fset := token.NewFileSet()
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") != tests {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files[name], srcs[name] = f, src
	}
	return files, srcs
}

// TestPackageDoc checks STYLE.md §9: one package comment (exec's and
// remote's in doc.go, with Overview and Usage sections), and a doc comment
// on every exported name.
func TestPackageDoc(t *testing.T) {
	for _, dir := range []string{".", "remote", "remote/sshtest"} {
		files, _ := goFiles(t, dir, false)
		var withDoc []string
		for name, f := range files {
			if f.Doc != nil {
				withDoc = append(withDoc, filepath.Base(name))
			}
			for _, d := range f.Decls {
				for _, missing := range undocumented(d) {
					t.Errorf("%s: %s is not documented", name, missing)
				}
			}
		}
		if len(withDoc) != 1 {
			t.Errorf("%s: package comments in %v, want exactly one", dir, withDoc)
		}
		if dir == "." || dir == "remote" {
			if !slices.Equal(withDoc, []string{"doc.go"}) {
				t.Errorf("%s: the package comment is in %v, want doc.go", dir, withDoc)
			}
			text := files[filepath.Join(dir, "doc.go")].Doc.Text()
			for _, h := range []string{"\n# Overview\n", "\n# Usage\n"} {
				if !strings.Contains(text, h) {
					t.Errorf("doc.go lacks %q", strings.TrimSpace(h))
				}
			}
		}
	}
}

// undocumented returns the exported names declared by d that have no doc
// comment. Methods of unexported types, and Error and Unwrap, whose
// meaning the error interfaces fix, need none.
func undocumented(d ast.Decl) []string {
	var out []string
	switch d := d.(type) {
	case *ast.FuncDecl:
		if !d.Name.IsExported() || d.Doc != nil {
			return nil
		}
		if d.Recv == nil {
			return []string{"func " + d.Name.Name}
		}
		recv := d.Recv.List[0].Type
		if s, ok := recv.(*ast.StarExpr); ok {
			recv = s.X
		}
		id, ok := recv.(*ast.Ident)
		if !ok || !id.IsExported() || d.Name.Name == "Error" || d.Name.Name == "Unwrap" {
			return nil
		}
		return []string{"method " + id.Name + "." + d.Name.Name}
	case *ast.GenDecl:
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				if s.Name.IsExported() && d.Doc == nil && s.Doc == nil {
					out = append(out, "type "+s.Name.Name)
				}
			case *ast.ValueSpec:
				for _, n := range s.Names {
					if n.IsExported() && d.Doc == nil && s.Doc == nil && s.Comment == nil {
						out = append(out, n.Name)
					}
				}
			}
		}
	}
	return out
}

// TestNoMutableGlobals checks STYLE.md §5: package variables are only
// sentinel errors, interface guards and constant tables.
func TestNoMutableGlobals(t *testing.T) {
	tables := map[string]bool{"signalNumbers": true, "signalNames": true} // sshtest: never written
	for _, dir := range []string{".", "remote", "remote/sshtest"} {
		files, _ := goFiles(t, dir, false)
		for name, f := range files {
			for _, d := range f.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok || g.Tok != token.VAR {
					continue
				}
				for _, s := range g.Specs {
					for _, n := range s.(*ast.ValueSpec).Names {
						if n.Name != "_" && !strings.HasPrefix(n.Name, "Err") && !strings.HasPrefix(n.Name, "err") && !tables[n.Name] {
							t.Errorf("%s: package variable %s", name, n.Name)
						}
					}
				}
			}
		}
	}
}

// TestDocExamples checks that every code block in the package
// documentation is taken from an Example function, which compiles and
// whose output is checked: each block's lines must appear, in order and
// together, in the body of one Example.
func TestDocExamples(t *testing.T) {
	for _, dir := range []string{".", "remote"} {
		t.Run(dir, func(t *testing.T) { docExamples(t, dir) })
	}
}

func docExamples(t *testing.T, dir string) {
	files, _ := goFiles(t, dir, false)
	var p comment.Parser
	var blocks []string
	for _, b := range p.Parse(files[filepath.Join(dir, "doc.go")].Doc.Text()).Content {
		if c, ok := b.(*comment.Code); ok {
			blocks = append(blocks, c.Text)
		}
	}
	if len(blocks) == 0 {
		t.Fatal("no code blocks in the package documentation")
	}
	tests, srcs := goFiles(t, dir, true)
	examples := map[string]string{}
	for name, f := range tests {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Example") || fn.Body == nil {
				continue
			}
			base := f.FileStart
			examples[fn.Name.Name] = codeLines(string(srcs[name][fn.Body.Lbrace-base+1 : fn.Body.Rbrace-base]))
		}
	}
	for i, b := range blocks {
		want := codeLines(b)
		var found []string
		for name, body := range examples {
			if strings.Contains(body, want) {
				found = append(found, name)
			}
		}
		if len(found) == 0 {
			t.Errorf("code block %d of the package documentation is in no Example function:\n%s", i+1, b)
		} else {
			t.Logf("code block %d is from %v", i+1, found)
		}
	}
}

// codeLines returns src's non-blank lines without their indentation, each
// ending in a newline and the whole starting with one, so that a block
// matches only whole lines.
func codeLines(src string) string {
	var b strings.Builder
	b.WriteString("\n")
	for l := range strings.SplitSeq(src, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}
