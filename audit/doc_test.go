package audit_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// parsePackage parses the non-test Go files of the directory.
func parsePackage(t *testing.T, dir string) []*ast.File {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// packageDirs are the packages of the audit tree, audit itself first.
func packageDirs() []string { return []string{".", "audittest", "sqlite", "sqlite/sqlitetest"} }

// TestPackageDoc checks the package documentation rules of STYLE.md §9: one
// package comment, with Overview and Usage sections in doc.go for the
// packages that have one, and a doc comment on every exported name.
func TestPackageDoc(t *testing.T) {
	withDocGo := map[string]bool{".": true, "sqlite": true}
	for _, dir := range packageDirs() {
		files := parsePackage(t, dir)
		docs := 0
		for _, f := range files {
			if f.Doc != nil {
				docs++
			}
		}
		if docs != 1 {
			t.Errorf("%s: %d package comments, want 1", dir, docs)
		}
		if withDocGo[dir] {
			doc, err := os.ReadFile(filepath.Join(dir, "doc.go"))
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range []string{"\n// # Overview\n", "\n// # Usage\n"} {
				if !strings.Contains(string(doc), h) {
					t.Errorf("doc.go lacks %q", strings.TrimSpace(h))
				}
			}
		}
		for _, f := range files {
			for _, d := range f.Decls {
				checkDocumented(t, d)
			}
		}
	}
}

func checkDocumented(t *testing.T, d ast.Decl) {
	t.Helper()
	switch d := d.(type) {
	case *ast.FuncDecl:
		if !d.Name.IsExported() {
			return
		}
		if d.Recv != nil {
			recv := d.Recv.List[0].Type
			if s, ok := recv.(*ast.StarExpr); ok {
				recv = s.X
			}
			if id, ok := recv.(*ast.Ident); ok && !id.IsExported() {
				return
			}
			// Error and Unwrap implement interfaces; their meaning is fixed.
			if d.Name.Name == "Error" || d.Name.Name == "Unwrap" {
				return
			}
		}
		if d.Doc == nil {
			t.Errorf("func %s is not documented", d.Name.Name)
		}
	case *ast.GenDecl:
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				if s.Name.IsExported() && d.Doc == nil && s.Doc == nil {
					t.Errorf("type %s is not documented", s.Name.Name)
				}
			case *ast.ValueSpec:
				for _, n := range s.Names {
					if n.IsExported() && d.Doc == nil && s.Doc == nil && s.Comment == nil {
						t.Errorf("%s is not documented", n.Name)
					}
				}
			}
		}
	}
}

// TestNoMutableGlobals checks STYLE.md §5: package variables are only
// sentinel errors, interface guards and constant tables.
func TestNoMutableGlobals(t *testing.T) {
	allowed := map[string]bool{"migrations": true} // sqlite's schema history, never written
	for _, dir := range packageDirs() {
		for _, f := range parsePackage(t, dir) {
			for _, d := range f.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok || g.Tok != token.VAR {
					continue
				}
				for _, s := range g.Specs {
					for _, n := range s.(*ast.ValueSpec).Names {
						if n.Name != "_" && !strings.HasPrefix(n.Name, "Err") && !allowed[n.Name] {
							t.Errorf("%s: package variable %s", dir, n.Name)
						}
					}
				}
			}
		}
	}
}
