package doccheck

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// PackageDoc checks the Go package in dir (its import path importPath)
// the way the project's guide packages want it: the package comment lives
// in doc.go alone, has "# Overview" and "# Usage" sections, and every
// exported name is documented, exported struct fields included. Each finding is a test error.
func PackageDoc(t testing.TB, dir, importPath string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var docFile *ast.File
	var list []*ast.File
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		list = append(list, f)
		switch {
		case name == "doc.go":
			docFile = f
		case f.Doc != nil:
			t.Errorf("%s has a package comment; only doc.go should", name)
		}
	}
	if docFile == nil || docFile.Doc == nil {
		t.Fatalf("%s: doc.go has no package comment", importPath)
	}
	text := docFile.Doc.Text()
	for _, h := range []string{"# Overview", "# Usage"} {
		if !strings.Contains(text, h) {
			t.Errorf("%s: package comment lacks %q", importPath, h)
		}
	}
	pkg, err := doc.NewFromFiles(fset, list, importPath)
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
		// Exported fields of an exported struct. A comment above a field
		// also covers the fields on the lines right below it, up to a
		// blank line ("Command is ..., Args ... and Env ...").
		for _, spec := range ty.Decl.Specs {
			st, ok := spec.(*ast.TypeSpec).Type.(*ast.StructType)
			if !ok {
				continue
			}
			covered, prevEnd := false, 0
			for _, fld := range st.Fields.List {
				line := fset.Position(fld.Pos()).Line
				switch {
				case fld.Doc != nil:
					covered = true
				case line != prevEnd+1:
					covered = false
				}
				prevEnd = fset.Position(fld.End()).Line
				for _, n := range fld.Names {
					if n.IsExported() && !covered && fld.Comment == nil {
						t.Errorf("field %s.%s is not documented", ty.Name, n.Name)
					}
				}
			}
		}
	}
	for _, v := range append(pkg.Consts, pkg.Vars...) {
		undocumented("value", strings.Join(v.Names, ","), v.Doc)
	}
}
