package doccheck

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// Options says what a Checker knows beyond the Go source.
type Options struct {
	// Schema names the struct type the configuration file decodes into.
	// If Schema.Dir is empty, configuration keys are not checked.
	Schema TypeRef
	// Prose lists code spans that look like a name of this tree but are
	// prose or another program's, each with the reason it is not checked.
	// An entry no document uses is itself a problem (Checker.Unused).
	Prose map[string]string
}

// TypeRef names a type declared in the tree: Dir is its directory,
// relative to the root, and Name its name.
type TypeRef struct{ Dir, Name string }

// A Checker verifies documents against one tree, parsed once. It is not
// safe for concurrent use.
type Checker struct {
	root  string
	opts  Options
	tree  *tree
	keys  *keyNode
	files map[string]*parsed
	heads map[string]map[string]bool // a document's heading anchors
	used  map[string]bool            // Prose entries met
}

// NewChecker parses the Go source of the module rooted at root.
func NewChecker(root string, opts Options) (*Checker, error) {
	t, err := loadTree(root)
	if err != nil {
		return nil, err
	}
	c := &Checker{root: root, opts: opts, tree: t, files: map[string]*parsed{},
		heads: map[string]map[string]bool{}, used: map[string]bool{}}
	if opts.Schema.Dir != "" {
		c.keys = t.schema(opts.Schema.Dir, opts.Schema.Name)
		if c.keys == nil || len(c.keys.fields) == 0 {
			return nil, fmt.Errorf("doccheck: no struct type %s in %s", opts.Schema.Name, opts.Schema.Dir)
		}
	}
	return c, nil
}

// Check verifies the Markdown document doc (a path; the names in it are
// relative to the root, its links to its own directory).
func (c *Checker) Check(doc string) ([]Problem, Stats, error) { return c.check(doc) }

// Flags returns the flags the tree's programs define, sorted.
func (c *Checker) Flags() []string { return sortedKeys(c.tree.flags) }

// Unused returns the Prose entries no checked document has used, sorted:
// an excuse for a span that is gone should go too.
func (c *Checker) Unused() []string {
	var out []string
	for k := range c.opts.Prose {
		if !c.used[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// run is one document being checked.
type run struct {
	c        *Checker
	doc      string
	st       Stats
	problems []Problem
}

func (r *run) fail(line int, ref, format string, args ...any) {
	r.problems = append(r.problems, Problem{Line: line, Ref: ref, Why: fmt.Sprintf(format, args...)})
}

var (
	spanRE     = regexp.MustCompile("`([^`]+)`")
	linkRE     = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)\)`)
	flagNameRE = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	commandRE  = regexp.MustCompile(`^[a-z][a-z-]*$`)
	flagRE     = regexp.MustCompile(`^--([a-z][a-z0-9-]*)`)
	chainRE    = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+)(?:\(.*\)|\{.*\})?(?:\.[A-Za-z_][A-Za-z0-9_]*)*$`)
	keyPathRE  = regexp.MustCompile(`^[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)+$`)
	selectorRE = regexp.MustCompile(`\b([a-z][a-z0-9]*)\.([A-Z][A-Za-z0-9_]*)(?:\.([A-Z][A-Za-z0-9_]*))?(\{[^{}]*\})?`)
	fieldRE    = regexp.MustCompile(`\b([A-Z][A-Za-z0-9_]*):`)
	snakeRE    = regexp.MustCompile(`^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$`)
	wordRE     = regexp.MustCompile(`[A-Za-z0-9_]+`)
	pathRE     = regexp.MustCompile(`^[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.@-]+)*/?$`)
)

// fileExts are the last parts of a dotted span that make it a file name
// (`audit.db`, `rigout.json`), not a configuration key.
var fileExts = map[string]bool{"db": true, "key": true, "json": true, "md": true, "go": true, "log": true,
	"toml": true, "yml": true, "yaml": true, "lock": true, "pid": true, "service": true, "png": true,
	"txt": true, "cursor": true, "jsonl": true, "mod": true, "sum": true, "txtar": true, "sh": true}

// spans checks the inline code spans of one line.
func (r *run) spans(line int, text string) {
	for _, m := range spanRE.FindAllStringSubmatch(text, -1) {
		s := strings.TrimSpace(m[1])
		if refRE.MatchString("`" + s + "`") {
			continue // a file.go:Name reference, checked above
		}
		if _, ok := r.c.opts.Prose[s]; ok {
			r.c.used[s] = true
			r.st.Prose++
			continue
		}
		r.span(line, s)
	}
}

func (r *run) span(line int, s string) {
	c := r.c
	switch {
	case strings.HasPrefix(s, "--"):
		r.flags(line, s, strings.Fields(s))
		return
	case strings.HasPrefix(s, "rigout "):
		r.command(line, s, strings.Fields(s)[1:])
		return
	case strings.HasPrefix(s, "{") || strings.HasPrefix(s, `"`):
		if c.keys != nil {
			r.jsonKeys(line, "`"+s+"`", s)
		}
		return
	}
	if m := chainRE.FindStringSubmatch(s); m != nil {
		if r.symbol(line, s, strings.Split(m[1], ".")) {
			return
		}
	}
	if snakeRE.MatchString(s) {
		// A tool, argument, key or column name: the code spells it out.
		r.st.Names++
		// A Prometheus metric is the namespace rigout_ and a name.
		if !c.tree.words[s] && !(strings.HasPrefix(s, "rigout_") && c.tree.words[strings.TrimPrefix(s, "rigout_")]) {
			r.fail(line, "`"+s+"`", "no string or struct tag of this module has the word %s", s)
		}
		return
	}
	if keyPathRE.MatchString(s) && c.keys != nil {
		parts := strings.Split(s, ".")
		if hasKey(c.keys.fields, parts[0]) && !fileExts[parts[len(parts)-1]] {
			r.st.Keys++
			// A dotted name the code spells out (an event type such as
			// audit.chain_key) is a name of the tree too.
			if why := c.keyPath(parts); why != "" && !c.tree.literals[s] {
				r.fail(line, "`"+s+"`", "%s, and the code has no string %q", why, s)
			}
			return
		}
	}
	r.path(line, s)
}

// symbol checks a dotted Go name; it reports false when s is not one.
func (r *run) symbol(line int, s string, parts []string) bool {
	t := r.c.tree
	upper := func(x string) bool { return x != "" && unicode.IsUpper(rune(x[0])) }
	ref := "`" + s + "`"
	if names, ok := t.pkgs[parts[0]]; ok && upper(parts[1]) {
		r.st.Symbols++
		switch {
		case !names[parts[1]]:
			r.fail(line, ref, "no package %s of this module declares %s", parts[0], parts[1])
		case len(parts) > 2 && upper(parts[2]) && !names[parts[1]+"."+parts[2]] && !t.hasMember(parts[1], parts[2]):
			r.fail(line, ref, "%s.%s has no field or method %s", parts[0], parts[1], parts[2])
		}
		return true
	}
	if upper(parts[0]) && upper(parts[1]) {
		r.st.Symbols++
		switch {
		case len(t.types[parts[0]]) == 0:
			r.fail(line, ref, "this module declares no type %s", parts[0])
		case !t.hasMember(parts[0], parts[1]):
			r.fail(line, ref, "no type %s of this module has a field or method %s", parts[0], parts[1])
		}
		return true
	}
	return false
}

// command checks a rigout command line: its subcommand (the first word,
// when it is a plain word) must be a string the code spells out, and its
// flags must be defined.
func (r *run) command(line int, s string, words []string) {
	if len(words) > 0 && commandRE.MatchString(words[0]) {
		r.st.Flags++
		if !r.c.tree.literals[words[0]] {
			r.fail(line, "`"+s+"`", "the code has no subcommand %q", words[0])
		}
	}
	r.flags(line, s, words)
}

// flags checks every --flag among words, up to a shell comment.
func (r *run) flags(line int, s string, words []string) {
	for _, w := range words {
		if strings.HasPrefix(w, "#") {
			break
		}
		m := flagRE.FindStringSubmatch(w)
		if m == nil {
			continue
		}
		r.st.Flags++
		if !r.c.tree.flags[m[1]] {
			r.fail(line, "`"+s+"`", "no program of this module defines the flag --%s", m[1])
		}
	}
}

// path checks a span that names a file or directory of the tree.
func (r *run) path(line int, s string) {
	p := strings.TrimPrefix(s, "./")
	if mod := r.c.tree.module; mod != "" {
		if rest, ok := strings.CutPrefix(p, mod+"/"); ok {
			p = rest
		}
	}
	if i := strings.IndexByte(p, '@'); i >= 0 {
		p = p[:i]
	}
	if !strings.Contains(p, "/") || strings.Contains(p, "..") || !pathRE.MatchString(p) {
		return
	}
	first, _, _ := strings.Cut(p, "/")
	if !r.c.tree.top[first] {
		return // not rooted in this tree: ~/.ssh/config, a pass entry, a URL path
	}
	r.st.Paths++
	if _, err := os.Stat(filepath.Join(r.c.root, filepath.FromSlash(p))); err != nil {
		r.fail(line, "`"+s+"`", "no such file or directory %s in the tree", p)
	}
}

// links checks the relative links of one line and their anchors.
func (r *run) links(line int, text string) {
	text = spanRE.ReplaceAllString(text, "")
	for _, m := range linkRE.FindAllStringSubmatch(text, -1) {
		target := m[1]
		if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
			continue
		}
		r.st.Links++
		file, anchor, _ := strings.Cut(target, "#")
		p := r.doc
		if file != "" {
			p = filepath.Join(filepath.Dir(r.doc), filepath.FromSlash(file))
			if _, err := os.Stat(p); err != nil {
				r.fail(line, target, "the link's file does not exist")
				continue
			}
		}
		if anchor == "" || !strings.HasSuffix(p, ".md") {
			continue
		}
		if !r.c.anchors(p)[anchor] {
			r.fail(line, target, "%s has no heading with the anchor #%s", filepath.Base(p), anchor)
		}
	}
}

// anchors returns the anchors GitHub gives the headings of a Markdown file.
func (c *Checker) anchors(p string) map[string]bool {
	if a, ok := c.heads[p]; ok {
		return a
	}
	a := map[string]bool{}
	c.heads[p] = a
	b, err := os.ReadFile(p)
	if err != nil {
		return a
	}
	fenced := false
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.TrimLeft(l, "#")
		if len(h) == len(l) || (h != "" && h[0] != ' ') {
			continue
		}
		s := slug(h)
		for i := 1; a[s]; i++ {
			s = fmt.Sprintf("%s-%d", slug(h), i)
		}
		a[s] = true
	}
	return a
}

// slug is GitHub's anchor for a heading: lower case, letters, digits, _
// and - kept, spaces turned into -, everything else dropped.
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// block checks a fenced block of a language other than Go: a JSON
// configuration snippet's keys, a shell block's rigout flags.
func (r *run) block(start int, lang string, lines []string) {
	switch lang {
	case "json":
		if r.c.keys != nil {
			r.jsonKeys(start, "```json", strings.Join(lines, "\n"))
		}
	case "sh", "bash", "shell", "console":
		for i, l := range lines {
			f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(l), "$ "))
			switch {
			case len(f) > 0 && f[0] == "rigout":
				r.command(start+1+i, strings.TrimSpace(l), f[1:])
			case len(f) > 3 && f[0] == "go" && f[1] == "run" && f[2] == "./cmd/rigout":
				r.command(start+1+i, strings.TrimSpace(l), f[3:])
			}
		}
	}
}

// jsonKeys checks the keys of a JSON object (or members without their
// braces) when its top-level keys are the configuration file's; other
// JSON — a client's configuration, a ledger row's detail — is left alone.
func (r *run) jsonKeys(line int, ref, text string) {
	var v map[string]any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		if err := json.Unmarshal([]byte("{"+text+"}"), &v); err != nil {
			return
		}
	}
	known := 0
	for k := range v {
		if hasKey(r.c.keys.fields, k) {
			known++
		}
	}
	if known == 0 {
		return
	}
	r.st.Keys++
	for _, why := range checkJSON(r.c.keys, v, "") {
		r.fail(line, ref, "%s", why)
	}
}

func hasKey(m map[string]*keyNode, k string) bool {
	_, ok := m[k]
	return ok
}

// checkJSON lists the keys of v that n does not have.
func checkJSON(n *keyNode, v any, at string) []string {
	if n == nil {
		return nil // a leaf, or a type that decodes itself
	}
	switch v := v.(type) {
	case []any:
		var out []string
		for _, e := range v {
			out = append(out, checkJSON(n, e, at)...)
		}
		return out
	case map[string]any:
		var out []string
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if n.fields == nil {
				out = append(out, checkJSON(n.elem, v[k], at+k+".")...)
				continue
			}
			sub, ok := n.fields[k]
			if !ok {
				out = append(out, fmt.Sprintf("the configuration file has no key %s%s", at, k))
				continue
			}
			out = append(out, checkJSON(sub, v[k], at+k+".")...)
		}
		return out
	}
	return nil
}

// keyPath checks a dotted configuration key; it returns why it is wrong,
// or "".
func (c *Checker) keyPath(parts []string) string {
	n := c.keys
	for i, p := range parts {
		if n == nil {
			return "" // below a leaf or a self-decoding type: not checkable
		}
		if n.fields == nil {
			n = n.elem // a map: p is a name the operator chooses
			continue
		}
		sub, ok := n.fields[p]
		if !ok {
			return fmt.Sprintf("the configuration file has no key %s", strings.Join(parts[:i+1], "."))
		}
		n = sub
	}
	return ""
}

// sketch checks the names an illustrative Go block gives: every
// pkg.Name (pkg a package of the module) and the fields of a composite
// literal pkg.Type{Field: …} on one line.
func (r *run) sketch(start int, lines []string) {
	t := r.c.tree
	start++ // the "// sketch" line
	for i, l := range lines {
		code, _, _ := strings.Cut(l, "//")
		for _, m := range selectorRE.FindAllStringSubmatch(code, -1) {
			if _, ok := t.pkgs[m[1]]; !ok {
				continue // a variable: sh.Tools(), gw.MCPServer()
			}
			parts := []string{m[1], m[2]}
			if m[3] != "" {
				parts = append(parts, m[3])
			}
			r.symbol(start+1+i, strings.Join(parts, "."), parts)
			if m[4] == "" || m[3] != "" {
				continue
			}
			for _, f := range fieldRE.FindAllStringSubmatch(m[4], -1) {
				r.st.Symbols++
				if !t.pkgs[m[1]][m[2]+"."+f[1]] && !t.hasMember(m[2], f[1]) {
					r.fail(start+1+i, m[1]+"."+m[2]+"{"+f[1]+"}", "%s.%s has no field %s", m[1], m[2], f[1])
				}
			}
		}
	}
}
