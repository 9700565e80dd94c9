package clientconfig_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// TestPackageDoc checks that the package comment lives in doc.go alone,
// with Overview and Usage sections, and that every exported name is
// documented.
func TestPackageDoc(t *testing.T) {
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var list []*ast.File
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = f
		list = append(list, f)
		if f.Doc != nil && name != "doc.go" {
			t.Errorf("%s has a package comment; only doc.go should", name)
		}
	}
	docFile := files["doc.go"]
	if docFile == nil || docFile.Doc == nil {
		t.Fatal("doc.go has no package comment")
	}
	text := docFile.Doc.Text()
	for _, h := range []string{"# Overview", "# Usage"} {
		if !strings.Contains(text, h) {
			t.Errorf("package comment lacks %q", h)
		}
	}
	pkg, err := doc.NewFromFiles(fset, list, "github.com/rigout/rigout/clientconfig")
	if err != nil {
		t.Fatal(err)
	}
	undocumented := func(kind, name, d string) {
		if strings.TrimSpace(d) == "" {
			t.Errorf("%s %s is not documented", kind, name)
		}
	}
	for _, f := range pkg.Funcs {
		undocumented("func", f.Name, f.Doc)
	}
	for _, ty := range pkg.Types {
		undocumented("type", ty.Name, ty.Doc)
		for _, f := range append(ty.Funcs, ty.Methods...) {
			undocumented("method", ty.Name+"."+f.Name, f.Doc)
		}
		for _, v := range append(ty.Consts, ty.Vars...) {
			undocumented("value", strings.Join(v.Names, ","), v.Doc)
		}
	}
	for _, v := range append(pkg.Consts, pkg.Vars...) {
		undocumented("value", strings.Join(v.Names, ","), v.Doc)
	}
}
