package doccheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
)

// tree is what the Go source of a module declares, as a document may name
// it: package names with their declarations, the command-line flags its
// programs define, and the configuration file's keys.
type tree struct {
	root   string
	module string // the module path from go.mod; "" without one

	// pkgs maps a package name (the package clause, not the path) to what
	// every package of that name declares: top-level names and, for each
	// type, "Type.Member" (methods, struct fields, interface methods).
	pkgs map[string]map[string]bool
	// types maps a type name to the types of that name in the module.
	types map[string][]*typeDecl
	// flags are the names of the flags some program of the module defines.
	flags map[string]bool
	// literals are the module's string literals: the event types, rules
	// and method names its code spells out.
	literals map[string]bool
	// words are the snake_case words inside those literals and struct
	// tags: tool, argument and key names, SQL columns.
	words map[string]bool
	// top are the names at the root of the tree (files and directories).
	top map[string]bool
	// decls maps a module-relative directory to its type declarations,
	// for the configuration schema's walk.
	decls map[string]map[string]*typeDecl
}

// typeDecl is one type declaration with what it needs to be resolved.
type typeDecl struct {
	dir     string
	spec    *ast.TypeSpec
	imports map[string]string // local name → import path
	members map[string]bool
	embeds  []string // names of embedded types (same package or not)
}

// flagMethods are flag.FlagSet's defining methods (and the package's
// functions of the same names), with the index of the argument that names
// the flag.
var flagMethods = map[string]int{
	"Bool": 0, "Duration": 0, "Float64": 0, "Int": 0, "Int64": 0, "String": 0, "Uint": 0, "Uint64": 0,
	"Func": 0, "BoolFunc": 0,
	"BoolVar": 1, "DurationVar": 1, "Float64Var": 1, "IntVar": 1, "Int64Var": 1, "StringVar": 1,
	"UintVar": 1, "Uint64Var": 1, "Var": 1, "TextVar": 1,
}

// loadTree parses every non-test Go file of the module rooted at root,
// leaving out nested modules (directories with a go.mod of their own),
// testdata and node_modules.
func loadTree(root string) (*tree, error) {
	t := &tree{
		root:     root,
		pkgs:     map[string]map[string]bool{},
		types:    map[string][]*typeDecl{},
		flags:    map[string]bool{},
		literals: map[string]bool{},
		words:    map[string]bool{},
		top:      map[string]bool{},
		decls:    map[string]map[string]*typeDecl{},
	}
	if b, err := os.ReadFile(filepath.Join(root, "go.mod")); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if m, ok := strings.CutPrefix(strings.TrimSpace(l), "module "); ok {
				t.module = strings.Trim(strings.TrimSpace(m), `"`)
			}
		}
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		t.top[e.Name()] = true
	}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			name := d.Name()
			if rel != "." && (name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			if rel != "." {
				if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, p, src, parser.SkipObjectResolution)
		if err != nil {
			return nil // a file that does not parse names nothing
		}
		t.add(path.Dir(rel), f)
		return nil
	})
	return t, err
}

func (t *tree) add(dir string, f *ast.File) {
	imports := map[string]string{}
	usesFlag := false
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		name := path.Base(p)
		if im.Name != nil {
			name = im.Name.Name
		}
		imports[name] = p
		if p == "flag" {
			usesFlag = true
		}
	}
	pkg := f.Name.Name
	names := t.pkgs[pkg]
	if names == nil {
		names = map[string]bool{}
		if pkg != "main" {
			t.pkgs[pkg] = names
		}
	}
	if t.decls[dir] == nil {
		t.decls[dir] = map[string]*typeDecl{}
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil || len(d.Recv.List) == 0 {
				names[d.Name.Name] = true
				continue
			}
			if recv := receiverName(d.Recv.List[0].Type); recv != "" {
				names[recv+"."+d.Name.Name] = true
				t.decl(dir, recv, imports).members[d.Name.Name] = true
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					names[s.Name.Name] = true
					td := t.decl(dir, s.Name.Name, imports)
					td.spec, td.imports = s, imports
					var fields []*ast.Field
					switch ty := s.Type.(type) {
					case *ast.StructType:
						fields = ty.Fields.List
					case *ast.InterfaceType:
						fields = ty.Methods.List
					}
					for _, fld := range fields {
						if len(fld.Names) == 0 {
							if n := typeName(fld.Type); n != "" {
								td.embeds = append(td.embeds, n)
								td.members[n] = true
								names[s.Name.Name+"."+n] = true
							}
						}
						for _, n := range fld.Names {
							td.members[n.Name] = true
							names[s.Name.Name+"."+n.Name] = true
						}
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						names[n.Name] = true
					}
				}
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BasicLit:
			if n.Kind == token.STRING {
				if v, err := strconv.Unquote(n.Value); err == nil {
					if len(v) < 100 {
						t.literals[v] = true
					}
					for _, w := range wordRE.FindAllString(v, -1) {
						t.words[strings.Trim(w, "_")] = true // Namespace+"_ssh_pool…"
					}
				}
			}
		case *ast.CallExpr:
			if name := flagDefined(n, usesFlag); name != "" && !strings.HasPrefix(dir, "examples") {
				t.flags[name] = true
			}
		}
		return true
	})
}

// flagDefined returns the name of the flag call defines, or "": a method
// of flag.FlagSet (in a file that imports flag), or the binary's own
// argument scanners, boolArg(args, "detach") and the like, that read a
// flag before the FlagSet does.
func flagDefined(call *ast.CallExpr, usesFlag bool) string {
	i := -1
	switch fn := call.Fun.(type) {
	case *ast.SelectorExpr:
		if j, ok := flagMethods[fn.Sel.Name]; ok && usesFlag {
			i = j
		}
	case *ast.Ident:
		if strings.HasSuffix(fn.Name, "Arg") && len(call.Args) >= 2 {
			if a, ok := call.Args[0].(*ast.Ident); ok && a.Name == "args" {
				i = 1
			}
		}
	}
	if i < 0 || len(call.Args) <= i {
		return ""
	}
	lit, ok := call.Args[i].(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return ""
	}
	name, err := strconv.Unquote(lit.Value)
	if err != nil || !flagNameRE.MatchString(name) {
		return ""
	}
	return name
}

// decl returns the record of type name in dir, made on first use (a
// method may come before its type).
func (t *tree) decl(dir, name string, imports map[string]string) *typeDecl {
	if td := t.decls[dir][name]; td != nil {
		return td
	}
	td := &typeDecl{dir: dir, imports: imports, members: map[string]bool{}}
	t.decls[dir][name] = td
	t.types[name] = append(t.types[name], td)
	return td
}

// typeName is the name of an embedded field's type: T for T, *T, p.T.
func typeName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return typeName(t.X)
	case *ast.SelectorExpr:
		return t.Sel.Name
	case *ast.Ident:
		return t.Name
	case *ast.IndexExpr:
		return typeName(t.X)
	}
	return ""
}

// hasMember reports whether some type called typ in the module has the
// member (method, field, interface method), directly or through an
// embedded type.
func (t *tree) hasMember(typ, member string) bool {
	seen := map[string]bool{}
	var walk func(string, int) bool
	walk = func(typ string, depth int) bool {
		if depth > 4 || seen[typ] {
			return false
		}
		seen[typ] = true
		for _, td := range t.types[typ] {
			if td.members[member] {
				return true
			}
			for _, e := range td.embeds {
				if walk(e, depth+1) {
					return true
				}
			}
		}
		return false
	}
	return walk(typ, 0)
}

// keyNode is one level of the configuration file's schema.
type keyNode struct {
	fields map[string]*keyNode // an object with these keys
	elem   *keyNode            // a map: any key, each value this
}

// schema walks the struct type name declared in dir (module-relative) the
// way encoding/json decodes into it, and returns its keys.
func (t *tree) schema(dir, name string) *keyNode {
	td := t.decls[dir][name]
	if td == nil || td.spec == nil {
		return nil
	}
	return t.walkType(td.spec.Type, td, map[*typeDecl]*keyNode{td: nil}, 0)
}

func (t *tree) walkType(e ast.Expr, in *typeDecl, seen map[*typeDecl]*keyNode, depth int) *keyNode {
	if depth > 12 {
		return nil
	}
	switch ty := e.(type) {
	case *ast.StarExpr:
		return t.walkType(ty.X, in, seen, depth+1)
	case *ast.ArrayType:
		return t.walkType(ty.Elt, in, seen, depth+1)
	case *ast.MapType:
		return &keyNode{elem: t.walkType(ty.Value, in, seen, depth+1)}
	case *ast.Ident:
		return t.walkNamed(in.dir, ty.Name, seen, depth)
	case *ast.SelectorExpr:
		x, ok := ty.X.(*ast.Ident)
		if !ok || t.module == "" {
			return nil
		}
		p := in.imports[x.Name]
		rel, ok := strings.CutPrefix(p, t.module+"/")
		if !ok {
			return nil // outside the module (time.Duration, json.RawMessage): a leaf
		}
		return t.walkNamed(rel, ty.Sel.Name, seen, depth)
	case *ast.StructType:
		n := &keyNode{fields: map[string]*keyNode{}}
		for _, f := range ty.Fields.List {
			tag := ""
			if f.Tag != nil {
				s, _ := strconv.Unquote(f.Tag.Value)
				tag = reflect.StructTag(s).Get("json")
			}
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			if len(f.Names) == 0 && name == "" {
				// An embedded struct: its fields are this one's.
				if sub := t.walkType(f.Type, in, seen, depth+1); sub != nil {
					for k, v := range sub.fields {
						n.fields[k] = v
					}
				}
				continue
			}
			for _, id := range f.Names {
				if !ast.IsExported(id.Name) {
					continue
				}
				key := name
				if key == "" {
					key = id.Name
				}
				n.fields[key] = t.walkType(f.Type, in, seen, depth+1)
			}
		}
		return n
	}
	return nil
}

func (t *tree) walkNamed(dir, name string, seen map[*typeDecl]*keyNode, depth int) *keyNode {
	td := t.decls[dir][name]
	if td == nil || td.spec == nil {
		return nil // a predeclared type, or one outside the tree: a leaf
	}
	if n, ok := seen[td]; ok {
		return n // a recursive type: as far as it was walked
	}
	seen[td] = nil
	if td.members["UnmarshalJSON"] || td.members["UnmarshalText"] {
		return nil // decodes itself: its keys are not the struct's
	}
	n := t.walkType(td.spec.Type, td, seen, depth+1)
	seen[td] = n
	return n
}
