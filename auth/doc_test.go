package auth_test

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

// TestPackageDoc: one package comment, in doc.go, with # Overview and
// # Usage; every exported name documented.
func TestPackageDoc(t *testing.T) {
	fset := token.NewFileSet()
	files, _ := filepath.Glob("*.go")
	var astFiles []*ast.File
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if f.Doc != nil && name != "doc.go" {
			t.Errorf("%s has a package comment; only doc.go may", name)
		}
		astFiles = append(astFiles, f)
	}
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"# Overview", "# Usage"} {
		if !strings.Contains(string(src), "// "+h+"\n") {
			t.Errorf("doc.go lacks %q", h)
		}
	}
	p, err := doc.NewFromFiles(fset, astFiles, "github.com/rigout/rigout/auth")
	if err != nil {
		t.Fatal(err)
	}
	undocumented := func(kind, name, d string) {
		if strings.TrimSpace(d) == "" {
			t.Errorf("%s %s is not documented", kind, name)
		}
	}
	for _, v := range append(p.Consts, p.Vars...) {
		for _, spec := range v.Decl.Specs {
			for _, n := range spec.(*ast.ValueSpec).Names {
				if n.IsExported() && v.Doc == "" && spec.(*ast.ValueSpec).Doc == nil && spec.(*ast.ValueSpec).Comment == nil {
					t.Errorf("%s is not documented", n.Name)
				}
			}
		}
	}
	for _, f := range p.Funcs {
		undocumented("func", f.Name, f.Doc)
	}
	for _, typ := range p.Types {
		undocumented("type", typ.Name, typ.Doc)
		for _, f := range typ.Funcs {
			undocumented("func", f.Name, f.Doc)
		}
		for _, m := range typ.Methods {
			undocumented("method", typ.Name+"."+m.Name, m.Doc)
		}
		for _, v := range append(typ.Consts, typ.Vars...) {
			undocumented("value", v.Names[0], v.Doc)
		}
		// Exported struct fields.
		for _, spec := range typ.Decl.Specs {
			st, ok := spec.(*ast.TypeSpec).Type.(*ast.StructType)
			if !ok {
				continue
			}
			for _, fld := range st.Fields.List {
				for _, n := range fld.Names {
					if n.IsExported() && fld.Doc == nil && fld.Comment == nil && !groupDocumented(st, fld) {
						t.Errorf("field %s.%s is not documented", typ.Name, n.Name)
					}
				}
			}
		}
	}
}

// groupDocumented allows a field that shares a declaration line with a
// documented one ("Name, Version string" under one comment).
func groupDocumented(_ *ast.StructType, fld *ast.Field) bool {
	return len(fld.Names) > 1 && fld.Doc != nil
}
