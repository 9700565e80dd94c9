// Package doccheck keeps a design document honest about the code it
// points at. The document names code in two ways, and Check verifies both
// against the Go source tree with go/parser and go/ast:
//
//   - a reference: an inline code span `path/file.go:Name`, where Name is a
//     top-level function, type, constant or variable declared in that file,
//     a method written Type.Method, or a struct field written Type.Field;
//   - a quotation: a fenced ```go block whose first line is the comment
//     "// path/file.go"; the rest must occur in that file, compared with runs
//     of white space collapsed. A line "// …" inside the block splits it into
//     pieces that must occur in that order. A block whose first line is
//     "// sketch" quotes nothing: a Checker verifies the names in it.
//
// A Checker verifies, besides those two, every other name a document gives
// in an inline code span or a link, when it looks like one of this tree's:
//
//   - a Go symbol: `pkg.Name`, `pkg.Type.Member`, `Type.Member` (a call's
//     parentheses or a literal's braces after it are ignored), where pkg
//     is the name of a package of the module;
//   - a flag: a span that starts with "--" or "rigout ", and each line of
//     a sh block that runs rigout: every --flag must be defined by some
//     program of the module (flag.FlagSet's methods, examples aside);
//   - a configuration key: a dotted `audit.postgres` whose first part is a
//     top-level key, and every key of a JSON span or block whose top-level
//     keys are the configuration file's (Options.Schema);
//   - a snake_case name (`execute_command`, `wait_seconds`): some string
//     literal or struct tag of the module must hold it as a word;
//   - a path: `dir/file` whose first element is at the root of the tree
//     (or an import path of the module), which must exist;
//   - a link: [text](target) to a file of the tree, which must exist, and
//     its #anchor, which must be a heading there.
//
// What only looks like one of these — another program's flag, a field of
// another module's type — is listed in Options.Prose with the reason.
//
// Check proves that what the document names exists where it says; it
// cannot prove that the prose around it is true.
package doccheck

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Problem is one reference or quotation the tree no longer bears out.
type Problem struct {
	Line int    // in the document
	Ref  string // what the document says
	Why  string
}

func (p Problem) String() string { return fmt.Sprintf("line %d: %s: %s", p.Line, p.Ref, p.Why) }

// Stats counts what Check verified.
type Stats struct {
	References, Quotations int
	// Checked by a Checker only (Flags counts rigout subcommands too):
	Symbols, Flags, Keys, Names, Paths, Links int
	Prose                                     int // spans Options.Prose excuses
}

func (s *Stats) add(o Stats) {
	s.References += o.References
	s.Quotations += o.Quotations
	s.Symbols += o.Symbols
	s.Flags += o.Flags
	s.Keys += o.Keys
	s.Names += o.Names
	s.Paths += o.Paths
	s.Links += o.Links
	s.Prose += o.Prose
}

// Total is the number of names verified.
func (s Stats) Total() int {
	return s.References + s.Quotations + s.Symbols + s.Flags + s.Keys + s.Names + s.Paths + s.Links
}

var refRE = regexp.MustCompile("`([A-Za-z0-9_./-]+\\.go):([A-Za-z_][A-Za-z0-9_]*(?:\\.[A-Za-z_][A-Za-z0-9_]*)?)`")

// Check reads the Markdown document doc and verifies every reference and
// quotation in it against the tree rooted at root (the paths in the
// document are relative to root). It checks nothing else: a Checker does.
func Check(root, doc string) ([]Problem, Stats, error) {
	c := &Checker{root: root, files: map[string]*parsed{}}
	return c.check(doc)
}

// load parses a file of the tree once.
func (c *Checker) load(rel string) (*parsed, error) {
	if p, ok := c.files[rel]; ok {
		return p, nil
	}
	p, err := parse(filepath.Join(c.root, rel))
	if err != nil {
		return nil, err
	}
	c.files[rel] = p
	return p, nil
}

func (c *Checker) check(doc string) ([]Problem, Stats, error) {
	f, err := os.Open(doc)
	if err != nil {
		return nil, Stats{}, err
	}
	defer f.Close()
	r := &run{c: c, doc: doc}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	line := 0
	var fence *quotation
	for sc.Scan() {
		line++
		text := sc.Text()
		trimmed := strings.TrimSpace(text)
		if fence != nil {
			if strings.HasPrefix(trimmed, "```") {
				switch {
				case fence.sketch && c.tree != nil:
					r.sketch(fence.start, fence.lines)
				case !fence.sketch:
					r.st.Quotations++
					r.problems = append(r.problems, fence.check(c.load)...)
				}
				fence = nil
				continue
			}
			fence.add(text)
			continue
		}
		if trimmed == "```go" {
			fence = &quotation{start: line}
			continue
		}
		if lang, ok := strings.CutPrefix(trimmed, "```"); ok {
			// Another language's block: read it to its end.
			start := line
			var block []string
			for sc.Scan() {
				line++
				if strings.HasPrefix(strings.TrimSpace(sc.Text()), "```") {
					break
				}
				block = append(block, sc.Text())
			}
			if c.tree != nil {
				r.block(start, strings.TrimSpace(lang), block)
			}
			continue
		}
		for _, m := range refRE.FindAllStringSubmatch(text, -1) {
			r.st.References++
			p, err := c.load(m[1])
			if err != nil {
				r.problems = append(r.problems, Problem{Line: line, Ref: m[0], Why: err.Error()})
				continue
			}
			if !p.has(m[2]) {
				r.problems = append(r.problems, Problem{Line: line, Ref: m[0], Why: fmt.Sprintf("%s declares no %s", m[1], m[2])})
			}
		}
		if c.tree != nil {
			r.spans(line, text)
			r.links(line, text)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, r.st, err
	}
	if fence != nil {
		r.problems = append(r.problems, Problem{Line: fence.start, Ref: "```go", Why: "the block is never closed"})
	}
	return r.problems, r.st, nil
}

// parsed is one source file: its text and the names it declares.
type parsed struct {
	text  string
	names map[string]bool
}

func (p *parsed) has(name string) bool { return p.names[name] }

func parse(path string) (*parsed, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("no such file: %w", err)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("does not parse: %w", err)
	}
	p := &parsed{text: string(src), names: map[string]bool{}}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil || len(d.Recv.List) == 0 {
				p.names[d.Name.Name] = true
				continue
			}
			if recv := receiverName(d.Recv.List[0].Type); recv != "" {
				p.names[recv+"."+d.Name.Name] = true
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					p.names[s.Name.Name] = true
					if st, ok := s.Type.(*ast.StructType); ok {
						for _, fld := range st.Fields.List {
							for _, n := range fld.Names {
								p.names[s.Name.Name+"."+n.Name] = true
							}
						}
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						p.names[n.Name] = true
					}
				}
			}
		}
	}
	return p, nil
}

// receiverName is T for a receiver T, *T, T[P] or *T[P].
func receiverName(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}

// quotation is a fenced go block being read: a quotation, or a sketch
// (first line "// sketch…") that quotes no file but whose names a
// Checker verifies.
type quotation struct {
	start  int
	file   string
	sketch bool
	lines  []string
}

func (q *quotation) add(line string) {
	if q.file == "" && !q.sketch && len(q.lines) == 0 {
		if f, ok := strings.CutPrefix(strings.TrimSpace(line), "// "); ok && strings.HasSuffix(f, ".go") {
			q.file = f
			return
		}
		if strings.HasPrefix(strings.TrimSpace(line), "// sketch") {
			q.sketch = true
			return
		}
	}
	q.lines = append(q.lines, line)
}

func (q *quotation) check(load func(string) (*parsed, error)) []Problem {
	if q.file == "" {
		return []Problem{{Line: q.start, Ref: "```go", Why: `a quotation must start with a "// path/file.go" line`}}
	}
	p, err := load(q.file)
	if err != nil {
		return []Problem{{Line: q.start, Ref: q.file, Why: err.Error()}}
	}
	hay := collapse(p.text)
	at := 0
	for _, piece := range q.pieces() {
		needle := collapse(piece)
		if needle == "" {
			continue
		}
		i := strings.Index(hay[at:], needle)
		if i < 0 {
			return []Problem{{Line: q.start, Ref: q.file, Why: fmt.Sprintf("the quoted code %q is no longer in it (in this order)", short(needle))}}
		}
		at += i + len(needle)
	}
	return nil
}

// pieces splits the block at "// …" lines.
func (q *quotation) pieces() []string {
	var out []string
	var cur []string
	for _, l := range q.lines {
		if strings.TrimSpace(l) == "// …" {
			out = append(out, strings.Join(cur, "\n"))
			cur = nil
			continue
		}
		cur = append(cur, l)
	}
	return append(out, strings.Join(cur, "\n"))
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

func short(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}
