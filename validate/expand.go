package validate

import (
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// taint records where data came from.
type taint uint8

const (
	taintFetch  taint = 1 << iota // downloaded: curl, wget, nc, …
	taintDecode                   // decoded: base64 -d, xxd -r, …
	taintNet                      // a network socket: /dev/tcp/…
)

func (t taint) String() string {
	switch {
	case t&taintFetch != 0:
		return "downloaded data"
	case t&taintDecode != 0:
		return "decoded data"
	case t&taintNet != 0:
		return "a network socket"
	}
	return "data"
}

// field is one argument after shell expansion. A field is either exact (toks
// is nil and s is the value) or a pattern (toks holds the value; s is a
// display form).
type field struct {
	s     string
	toks  []ptok
	pos   syntax.Pos
	taint taint
	proc  *syntax.ProcSubst // the word is a process substitution <(…)
	split bool              // an unquoted unknown expansion touches literal text
}

func (f field) exact() bool { return f.toks == nil }

// dynamic reports whether the field holds an unknown expansion.
func (f field) dynamic() bool {
	for _, k := range f.toks {
		if k.kind == tUnknown {
			return true
		}
	}
	return false
}

// show renders the field for a reason.
func (f field) show() string {
	return showPath(f.s)
}

// mayBeOption reports whether a field could start with '-'.
func (f field) mayBeOption() bool {
	if f.exact() {
		return strings.HasPrefix(f.s, "-")
	}
	if len(f.toks) == 0 {
		return false
	}
	k := f.toks[0]
	switch k.kind {
	case tLit:
		return k.b == '-'
	case tUnknown:
		return k.b&unkNoFlag == 0
	}
	return false
}

// lit returns the literal text of a field's leading literal tokens.
func (f field) prefix() string {
	if f.exact() {
		return f.s
	}
	var b []byte
	for _, k := range f.toks {
		if k.kind != tLit {
			break
		}
		b = append(b, k.b)
	}
	return string(b)
}

func unknownField(flags uint8) field {
	return field{s: "$…", toks: []ptok{{kind: tUnknown, b: flags}}}
}

func exactField(s string) field { return field{s: s} }

// value is what a variable holds.
type value struct {
	f     field
	arr   []field
	isArr bool
}

// binding is a variable with one or more possible values.
type binding struct {
	alts []value
}

// builder accumulates the fields of one word.
type builder struct {
	out     []field
	lit     []byte
	toks    []ptok
	tokMode bool
	has     bool
	taint   taint
	proc    *syntax.ProcSubst
	pos     syntax.Pos
	unqUnk  bool
	hasLit  bool
	noSplit bool   // assignments, here-strings: no field splitting, no globbing
	disp    []byte // the field as people should see it: $X for an unknown $X
	label   string // how the next unknown expansion is shown
	w       *walker
}

func (b *builder) toTok() {
	if b.tokMode {
		return
	}
	b.tokMode = true
	b.toks = make([]ptok, 0, len(b.lit)+4)
	for _, c := range b.lit {
		b.toks = append(b.toks, ptok{kind: tLit, b: c})
	}
}

func (b *builder) byteLit(c byte) {
	b.hasLit = true
	b.disp = append(b.disp, c)
	if b.tokMode {
		b.toks = append(b.toks, ptok{kind: tLit, b: c})
		return
	}
	b.lit = append(b.lit, c)
}

func (b *builder) addQuoted(s string) {
	b.has = true
	for i := 0; i < len(s); i++ {
		b.byteLit(s[i])
	}
}

// tooLong accounts for n bytes that an expansion adds to the word. It
// reports whether the word would grow beyond maxValue, or the check beyond
// maxExpanded bytes in all (X=$X$X doubles at every step); then the rest
// of the word is an unknown expansion. Text written in the command itself
// is never cut: the input limit bounds it.
func (b *builder) tooLong(n int) bool {
	if b.w != nil {
		b.w.res.expanded += n
		if b.w.res.expanded > maxExpanded {
			b.w.complex("expansions produce more than " + strconv.Itoa(maxExpanded>>20) + " MiB of text")
		}
	}
	if len(b.disp)+n <= maxValue {
		return false
	}
	if !b.tokMode || len(b.toks) == 0 || b.toks[len(b.toks)-1].kind != tUnknown {
		b.toTok()
		b.toks = append(b.toks, ptok{kind: tUnknown})
	}
	return true
}

func (b *builder) addWild(k ptok) {
	b.has = true
	b.toTok()
	b.toks = append(b.toks, k)
	b.disp = append(b.disp, tokString([]ptok{k})...)
}

func (b *builder) addUnknown(flags uint8, quoted bool) {
	b.has = true
	b.toTok()
	b.toks = append(b.toks, ptok{kind: tUnknown, b: flags})
	if b.label == "" {
		b.disp = append(b.disp, "$…"...)
	} else {
		b.disp = append(b.disp, b.label...)
	}
	if !quoted && !b.noSplit {
		b.unqUnk = true
	}
}

// addGlob adds unquoted text whose glob characters are active. When escapes
// is set, a backslash quotes the next byte (source text); otherwise it is
// literal (the result of an expansion).
func (b *builder) addGlob(s string, escapes bool) {
	if len(s) > 0 {
		b.has = true
	}
	if !escapes && b.tooLong(len(s)) {
		return
	}
	lastClose := strings.LastIndexByte(s, ']')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && escapes:
			if i+1 < len(s) {
				i++
				b.byteLit(s[i])
			}
		case b.noSplit:
			b.byteLit(c)
		case c == '*':
			b.addWild(ptok{kind: tStar})
		case c == '?':
			b.addWild(ptok{kind: tAny})
		case c == '[' && i < lastClose:
			if set, n, ok := parseClass(s[i:]); ok {
				b.addWild(ptok{kind: tClass, cls: set})
				i += n - 1
				continue
			}
			b.byteLit(c)
		default:
			b.byteLit(c)
		}
	}
}

// addExpanded adds the known result of an expansion. Unquoted, it is split
// into fields at IFS characters and its glob characters are active.
func (b *builder) addExpanded(s, ifs string, quoted bool) {
	if b.tooLong(len(s)) {
		b.has = true
		return
	}
	if quoted || b.noSplit {
		b.addQuoted(s)
		return
	}
	start := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && strings.IndexByte(ifs, s[i]) < 0 {
			continue
		}
		if i > start {
			b.addGlob(s[start:i], false)
		}
		if i < len(s) {
			b.flush()
		}
		start = i + 1
	}
}

func (b *builder) addToks(t []ptok, disp string) {
	b.has = true
	if b.tooLong(len(disp) + len(t)) {
		return
	}
	b.toTok()
	for _, k := range t {
		if k.kind == tLit {
			b.hasLit = true
		}
	}
	b.toks = append(b.toks, t...)
	b.disp = append(b.disp, disp...)
}

func (b *builder) addValue(v field, ifs string, quoted bool) {
	b.taint |= v.taint
	if v.exact() {
		b.addExpanded(v.s, ifs, quoted)
		return
	}
	b.addToks(v.toks, v.s)
	if !quoted && v.dynamic() {
		b.unqUnk = true
	}
}

func (b *builder) flush() {
	if !b.has {
		b.lit = b.lit[:0]
		b.disp = b.disp[:0]
		b.toks = nil
		b.tokMode = false
		b.proc = nil
		b.unqUnk = false
		b.hasLit = false
		return
	}
	f := field{pos: b.pos, taint: b.taint, proc: b.proc}
	if b.tokMode {
		f.toks = b.toks
		f.s = string(b.disp)
		f.split = b.unqUnk && b.hasLit
	} else {
		f.s = string(b.lit)
	}
	b.out = append(b.out, f)
	b.lit = b.lit[:0]
	b.disp = b.disp[:0]
	b.toks = nil
	b.tokMode = false
	b.has = false
	b.proc = nil
	b.unqUnk = false
	b.hasLit = false
}

// result returns the single field of a no-split builder.
func (b *builder) single() field {
	b.has = true
	b.flush()
	if len(b.out) == 0 {
		return field{pos: b.pos}
	}
	return concatFields(b.out, " ")
}

// joinFields concatenates two fields with sep between them.
func joinFields(a, b field, sep string) field {
	out := field{pos: a.pos, taint: a.taint | b.taint}
	if a.exact() && b.exact() {
		out.s = a.s + sep + b.s
		return out
	}
	ta, tb := a.toks, b.toks
	if ta == nil {
		ta = litToks(a.s)
	}
	if tb == nil {
		tb = litToks(b.s)
	}
	t := make([]ptok, 0, len(ta)+len(sep)+len(tb))
	t = append(t, ta...)
	t = append(t, litToks(sep)...)
	t = append(t, tb...)
	out.toks = t
	out.s = a.s + sep + b.s
	return out
}

// concatFields joins fields with sep in one pass.
func concatFields(parts []field, sep string) field {
	if len(parts) == 0 {
		return field{}
	}
	if len(parts) == 1 {
		return parts[0]
	}
	out := field{pos: parts[0].pos}
	exact := true
	n := 0
	for _, p := range parts {
		out.taint |= p.taint
		exact = exact && p.exact()
		n += len(p.s) + len(sep)
	}
	var disp strings.Builder
	disp.Grow(n)
	for i, p := range parts {
		if i > 0 {
			disp.WriteString(sep)
		}
		disp.WriteString(p.s)
	}
	out.s = disp.String()
	if exact {
		return out
	}
	toks := make([]ptok, 0, n)
	for i, p := range parts {
		if i > 0 {
			toks = append(toks, litToks(sep)...)
		}
		if p.exact() {
			toks = append(toks, litToks(p.s)...)
		} else {
			toks = append(toks, p.toks...)
		}
	}
	out.toks = toks
	return out
}

const maxBraceFields = 4096

// expandWords expands words into fields as the shell would.
func (w *walker) expandWords(words []*syntax.Word) []field {
	out := make([]field, 0, len(words))
	for _, wd := range words {
		out = w.expandWord(wd, out)
	}
	return out
}

func (w *walker) expandWord(wd *syntax.Word, out []field) []field {
	if len(wd.Parts) == 0 {
		return out
	}
	pos := wd.Pos()
	if braceCandidate(wd) {
		// SplitBraces rewrites the word in place; work on a copy so that
		// the tree stays intact for later walks.
		cp := &syntax.Word{Parts: append([]syntax.WordPart(nil), wd.Parts...)}
		syntax.SplitBraces(cp)
		wd = cp
	}
	if !hasBraceExp(wd.Parts) {
		return w.expandParts(wd.Parts, pos, out)
	}
	n := 0
	w.braceWords(wd.Parts, func(parts []syntax.WordPart) bool {
		n++
		if n > maxBraceFields {
			w.complex("a brace expansion yields more than " + strconv.Itoa(maxBraceFields) + " words")
			return false
		}
		out = w.expandParts(parts, pos, out)
		return true
	})
	return out
}

func braceCandidate(wd *syntax.Word) bool {
	for _, p := range wd.Parts {
		if l, ok := p.(*syntax.Lit); ok && strings.IndexByte(l.Value, '{') >= 0 {
			return true
		}
	}
	return false
}

func hasBraceExp(parts []syntax.WordPart) bool {
	for _, p := range parts {
		if _, ok := p.(*syntax.BraceExp); ok {
			return true
		}
	}
	return false
}

// braceWords calls yield with each word that brace expansion produces.
func (w *walker) braceWords(parts []syntax.WordPart, yield func([]syntax.WordPart) bool) bool {
	for i, p := range parts {
		br, ok := p.(*syntax.BraceExp)
		if !ok {
			continue
		}
		prefix, rest := parts[:i], parts[i+1:]
		for _, elem := range braceElems(br) {
			next := make([]syntax.WordPart, 0, len(prefix)+len(elem)+len(rest))
			next = append(next, prefix...)
			next = append(next, elem...)
			next = append(next, rest...)
			if !w.braceWords(next, yield) {
				return false
			}
		}
		return true
	}
	return yield(parts)
}

// braceElems lists the alternatives of a brace expansion.
func braceElems(br *syntax.BraceExp) [][]syntax.WordPart {
	if !br.Sequence {
		out := make([][]syntax.WordPart, len(br.Elems))
		for i, e := range br.Elems {
			out[i] = e.Parts
		}
		return out
	}
	from, to := br.Elems[0].Lit(), br.Elems[1].Lit()
	incr := 1
	if len(br.Elems) > 2 {
		if n, err := strconv.Atoi(br.Elems[2].Lit()); err == nil && n != 0 {
			incr = n
		}
	}
	if incr < 0 {
		incr = -incr
	}
	var vals []string
	if a, err1 := strconv.Atoi(from); err1 == nil {
		b, _ := strconv.Atoi(to)
		width := 0
		if (len(from) > 1 && (from[0] == '0' || strings.HasPrefix(from, "-0"))) || (len(to) > 1 && (to[0] == '0' || strings.HasPrefix(to, "-0"))) {
			width = max(len(from), len(to))
		}
		step := incr
		if b < a {
			step = -incr
		}
		for x, n := a, 0; (step > 0 && x <= b || step < 0 && x >= b) && n <= maxBraceFields; x, n = x+step, n+1 {
			s := strconv.Itoa(x)
			for len(s) < width {
				if s[0] == '-' {
					s = "-0" + s[1:]
				} else {
					s = "0" + s
				}
			}
			vals = append(vals, s)
		}
	} else if len(from) == 1 && len(to) == 1 {
		a, b := int(from[0]), int(to[0])
		step := incr
		if b < a {
			step = -incr
		}
		for x := a; step > 0 && x <= b || step < 0 && x >= b; x += step {
			vals = append(vals, string(rune(x)))
		}
	}
	out := make([][]syntax.WordPart, len(vals))
	for i, v := range vals {
		out[i] = []syntax.WordPart{&syntax.Lit{Value: v}}
	}
	return out
}

func (w *walker) expandParts(parts []syntax.WordPart, pos syntax.Pos, out []field) []field {
	b := builder{pos: pos, out: out, w: w}
	w.addParts(&b, parts, false, true)
	b.flush()
	return b.out
}

// expandString expands a word as the value of an assignment or a
// here-string: one field, no splitting, no globbing.
func (w *walker) expandString(wd *syntax.Word) field {
	if len(wd.Parts) == 0 {
		return field{}
	}
	b := builder{pos: wd.Pos(), noSplit: true, w: w}
	w.addParts(&b, wd.Parts, false, true)
	return b.single()
}

// addParts adds word parts to b. quoted is true inside double quotes.
func (w *walker) addParts(b *builder, parts []syntax.WordPart, quoted, tilde bool) {
	for i, part := range parts {
		switch p := part.(type) {
		case *syntax.Lit:
			v := p.Value
			if quoted {
				b.addQuoted(unescapeDouble(v))
				continue
			}
			if i == 0 && tilde && strings.HasPrefix(v, "~") {
				v = w.tilde(b, v, len(parts) == 1)
			}
			b.addGlob(v, true)
		case *syntax.SglQuoted:
			v := p.Value
			if p.Dollar {
				v = ansiC(v)
			}
			b.addQuoted(v)
		case *syntax.DblQuoted:
			b.has = true
			w.addParts(b, p.Parts, true, false)
		case *syntax.ParamExp:
			w.expandParam(b, p, quoted)
		case *syntax.CmdSubst:
			out, ok, t := w.substOutput(p.Stmts)
			b.taint |= t
			if ok {
				b.addValue(out, w.ifs(), quoted)
			} else {
				prev := b.label
				b.label = "$(" + describeStmts(p.Stmts) + ")"
				var flags uint8
				if numericProducer(p.Stmts) {
					flags = unkNumber
				}
				b.addUnknown(flags, quoted)
				b.label = prev
			}
		case *syntax.ArithmExp:
			if n, ok := w.arith(p.X); ok {
				b.addQuoted(strconv.Itoa(n))
			} else {
				prev := b.label
				b.label = "$((…))"
				b.addUnknown(unkNonEmpty|unkNumber, quoted)
				b.label = prev
			}
		case *syntax.ProcSubst:
			if !b.has {
				b.proc = p
			}
			b.taint |= w.taintOf(p.Stmts)
			b.addQuoted("/dev/fd/63")
		case *syntax.ExtGlob:
			if quoted {
				b.addQuoted(p.Op.String() + p.Pattern.Value + ")")
			} else {
				b.addWild(ptok{kind: tStar})
			}
		default:
			b.addUnknown(0, quoted)
		}
	}
}

// tilde expands a leading tilde prefix of an unquoted literal and returns
// the rest of the literal.
func (w *walker) tilde(b *builder, v string, whole bool) string {
	end := strings.IndexByte(v, '/')
	if end < 0 {
		if !whole {
			return v
		}
		end = len(v)
	}
	name := v[1:end]
	switch {
	case name == "":
		b.addValue(w.homeValue(), w.ifs(), true)
	case name == "root":
		b.addQuoted("/root")
	case name == "+":
		b.addValue(w.cwdField(), w.ifs(), true)
	case name == "-":
		b.addUnknown(0, true)
	case validLogin(name):
		b.addQuoted(homeDir)
	default:
		return v
	}
	return v[end:]
}

func (w *walker) homeValue() field {
	if v, ok := w.lookupScalar("HOME"); ok {
		return v
	}
	return exactField(homeDir)
}

func validLogin(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// unescapeDouble removes the backslashes that double quotes honour.
func unescapeDouble(s string) string { return unescape(s, true) }

// unescapeHeredoc removes the backslashes that an unquoted here-document
// honours: those of double quotes, except before '"'.
func unescapeHeredoc(s string) string { return unescape(s, false) }

// unescape removes a backslash before $, `, \ (and " if quote is set), and
// a backslash-newline pair, as the shell does inside double quotes.
func unescape(s string, quote bool) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			switch n := s[i+1]; {
			case n == '$', n == '`', n == '\\', n == '"' && quote:
				i++
				c = s[i]
			case n == '\n':
				i++
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

// ansiC decodes the escapes of a $'…' string.
func ansiC(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	out, _ := decodeEscapes(s, false)
	return out
}

// decodeEscapes decodes backslash escapes as $'…', printf and echo -e do.
// With stopAtC, "\c" ends the output and stop is true.
func decodeEscapes(s string, stopAtC bool) (out string, stop bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '\\', '\'', '"', '?':
			b.WriteByte(e)
		case 'c':
			if stopAtC {
				return b.String(), true
			}
			b.WriteByte('\\')
			b.WriteByte(e)
		case 'x':
			n, l := hexPrefix(s[i+1:], 2)
			if l == 0 {
				b.WriteString("\\x")
				continue
			}
			b.WriteByte(byte(n))
			i += l
		case 'u', 'U':
			max := 4
			if e == 'U' {
				max = 8
			}
			n, l := hexPrefix(s[i+1:], max)
			if l == 0 {
				b.WriteByte('\\')
				b.WriteByte(e)
				continue
			}
			b.WriteRune(rune(n))
			i += l
		case '0', '1', '2', '3', '4', '5', '6', '7':
			n, l := 0, 0
			for l < 3 && i+l < len(s) && s[i+l] >= '0' && s[i+l] <= '7' {
				n = n*8 + int(s[i+l]-'0')
				l++
			}
			b.WriteByte(byte(n))
			i += l - 1
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return b.String(), false
}

func hexPrefix(s string, max int) (n, l int) {
	for l < max && l < len(s) {
		c := s[l]
		var d int
		switch {
		case c >= '0' && c <= '9':
			d = int(c - '0')
		case c >= 'a' && c <= 'f':
			d = int(c-'a') + 10
		case c >= 'A' && c <= 'F':
			d = int(c-'A') + 10
		default:
			return n, l
		}
		n = n*16 + d
		l++
	}
	return n, l
}

// ifs returns the field separators.
func (w *walker) ifs() string {
	if v, ok := w.lookupScalar("IFS"); ok && v.exact() {
		return v.s
	}
	return " \t\n"
}

// lookup returns the value of a variable, picking one alternative when it
// has several.
func (w *walker) lookup(name string) (value, bool) {
	bnd := w.vars[name]
	if bnd == nil && name == "FUNCNAME" && w.fn != nil {
		// Inside a function, $FUNCNAME is its name: f(){ $FUNCNAME|$FUNCNAME& } calls f.
		return value{arr: []field{exactField(w.fn.first)}, isArr: true}, true
	}
	if bnd == nil || len(bnd.alts) == 0 {
		return value{}, false
	}
	i := 0
	if len(bnd.alts) > 1 {
		i = w.pick(name, len(bnd.alts))
	}
	v := bnd.alts[i]
	if !v.isArr && !v.f.exact() && len(v.f.toks) == 1 && v.f.toks[0].kind == tUnknown && v.f.taint == 0 {
		return value{}, false
	}
	return v, true
}

func (w *walker) lookupScalar(name string) (field, bool) {
	v, ok := w.lookup(name)
	if !ok {
		return field{}, false
	}
	if v.isArr {
		if len(v.arr) == 0 {
			return field{}, true
		}
		return v.arr[0], true
	}
	return v.f, true
}

// pick chooses one of n alternatives for the current combination.
func (w *walker) pick(key any, n int) int {
	if w.ch == nil {
		return 0
	}
	return w.ch.pick(key, n)
}

// chooser enumerates combinations of alternatives (variables with several
// possible values, ${X:-default} with X unknown).
type chooser struct {
	keys   []any
	counts []int
	sel    []int
}

func (c *chooser) pick(key any, n int) int {
	for i, k := range c.keys {
		if k == key {
			if c.sel[i] < n {
				return c.sel[i]
			}
			return 0
		}
	}
	c.keys = append(c.keys, key)
	c.counts = append(c.counts, n)
	c.sel = append(c.sel, 0)
	return 0
}

// next advances to the next combination; false when all were seen.
func (c *chooser) next() bool {
	for i := len(c.sel) - 1; i >= 0; i-- {
		c.sel[i]++
		if c.sel[i] < c.counts[i] {
			return true
		}
		c.sel[i] = 0
	}
	return false
}

func (w *walker) expandParam(b *builder, pe *syntax.ParamExp, quoted bool) {
	prev := b.label
	b.label = paramLabel(pe)
	defer func() { b.label = prev }()
	if pe.Param == nil || pe.Width || pe.IsSet || pe.Flags != nil || pe.NestedParam != nil || len(pe.Modifiers) > 0 || pe.Names != 0 {
		b.addUnknown(0, quoted)
		return
	}
	name := pe.Param.Value
	if pe.Excl {
		// ${!ref}: the variable that ref names.
		if pe.Index != nil && (arithLit(pe.Index) == "@" || arithLit(pe.Index) == "*") {
			// ${!a[@]}: the indices of an array.
			b.addUnknown(unkNumber, quoted)
			return
		}
		ref, ok := w.lookupScalar(name)
		if !ok || !ref.exact() || pe.Index != nil || !isAssignment(ref.s+"=") {
			b.addUnknown(0, quoted)
			return
		}
		name = ref.s
	}
	if pe.Length {
		b.addUnknown(unkNonEmpty|unkNoFlag|unkNumber, quoted)
		return
	}
	ifs := w.ifs()

	// Lists: $@, $*, ${a[@]}, ${a[*]}.
	var list []field
	isList, star := false, false
	switch {
	case name == "@" || name == "*":
		if !w.hasArgs {
			b.addUnknown(0, quoted)
			return
		}
		isList, star, list = true, name == "*", w.args
	case pe.Index != nil:
		idx := arithLit(pe.Index)
		v, ok := w.lookup(name)
		switch {
		case idx == "@" || idx == "*":
			if !ok {
				b.addUnknown(0, quoted)
				return
			}
			isList, star = true, idx == "*"
			if v.isArr {
				list = v.arr
			} else {
				list = []field{v.f}
			}
		default:
			n, err := strconv.Atoi(idx)
			if !ok || err != nil {
				b.addUnknown(0, quoted)
				return
			}
			switch {
			case v.isArr && n >= 0 && n < len(v.arr):
				w.applyOps(b, pe, v.arr[n], true, quoted)
			case !v.isArr && n == 0:
				w.applyOps(b, pe, v.f, true, quoted)
			default:
				w.applyOps(b, pe, field{}, false, quoted)
			}
			return
		}
	}
	if isList {
		if pe.Exp != nil || pe.Slice != nil || pe.Repl != nil {
			b.addUnknown(0, quoted)
			return
		}
		if quoted && star {
			sep := ""
			if ifs != "" {
				sep = ifs[:1]
			}
			if len(list) > 0 {
				b.addValue(concatFields(list, sep), ifs, true)
			}
			return
		}
		for i, f := range list {
			if i > 0 {
				b.flush()
				if quoted {
					b.has = true
				}
			}
			b.addValue(f, ifs, quoted)
		}
		return
	}

	// Scalars.
	v, ok := w.scalarParam(name)
	w.applyOps(b, pe, v, ok, quoted)
}

// scalarParam returns the value of a scalar parameter.
func (w *walker) scalarParam(name string) (field, bool) {
	if isDigits(name) {
		if !w.hasArgs {
			return field{}, false
		}
		n, _ := strconv.Atoi(name)
		if n == 0 {
			if w.arg0 != nil {
				return *w.arg0, true
			}
			return field{}, false
		}
		if n-1 < len(w.args) {
			return w.args[n-1], true
		}
		return field{}, true // unset positional: empty
	}
	switch name {
	case "#", "?", "$", "!", "RANDOM", "SECONDS", "LINENO", "UID", "EUID", "PPID", "BASHPID", "SRANDOM", "EPOCHSECONDS":
		if v, ok := w.lookupScalar(name); ok {
			return v, true
		}
		return unknownField(unkNonEmpty | unkNoFlag | unkNumber), false
	case "HOME":
		return w.homeValue(), true
	case "PWD":
		if v, ok := w.lookupScalar(name); ok {
			return v, true
		}
		return w.cwdField(), true
	case "OLDPWD":
		if v, ok := w.lookupScalar(name); ok {
			return v, true
		}
		// Some absolute directory.
		return field{s: "$OLDPWD", toks: []ptok{{kind: tLit, b: '/'}, {kind: tUnknown}}}, true
	case "PATH", "SHELL", "BASH":
		if v, ok := w.lookupScalar(name); ok {
			return v, true
		}
		switch name {
		case "PATH":
			return exactField("/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"), true
		case "BASH":
			return exactField("/bin/bash"), true
		}
		return field{s: "/$…", toks: []ptok{{kind: tLit, b: '/'}, {kind: tUnknown, b: unkNonEmpty}}}, true
	case "IFS":
		if v, ok := w.lookupScalar(name); ok {
			return v, true
		}
		return exactField(" \t\n"), true
	}
	return w.lookupScalar(name)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// applyOps applies the operators of a parameter expansion to a scalar value
// (ok false: unknown) and adds the result.
func (w *walker) applyOps(b *builder, pe *syntax.ParamExp, v field, ok, quoted bool) {
	ifs := w.ifs()
	unknown := func(flags uint8) { b.addUnknown(flags, quoted) }
	if !ok && !v.exact() && len(v.toks) == 1 && v.toks[0].kind == tUnknown {
		// A special parameter with known traits.
		if pe.Exp == nil && pe.Slice == nil && pe.Repl == nil {
			b.addUnknown(v.toks[0].b, quoted)
			return
		}
		ok = false
	}
	switch {
	case pe.Slice != nil:
		off, ok1 := w.arith(pe.Slice.Offset)
		length, ok2 := -1, true
		if pe.Slice.Length != nil {
			length, ok2 = w.arith(pe.Slice.Length)
		}
		if ok && !v.exact() && ok1 && ok2 {
			// Slice the literal start of a partly known value: ${PWD:0:1}.
			if v.toks[0].kind == tCwd {
				v = field{s: "/"}
			} else {
				v = field{s: v.prefix()}
			}
			if off < 0 || length < 0 || off+length > len(v.s) {
				unknown(0)
				return
			}
		}
		if !ok || !ok1 || !ok2 {
			unknown(0)
			return
		}
		s := v.s
		if off < 0 {
			off += len(s)
		}
		off = min(max(off, 0), len(s))
		end := len(s)
		if length >= 0 {
			end = min(off+length, len(s))
		} else if pe.Slice.Length != nil {
			end = max(len(s)+length, off)
		}
		b.addExpanded(s[off:end], ifs, quoted)
		return
	case pe.Repl != nil:
		if !ok || !v.exact() {
			unknown(0)
			return
		}
		orig, ok1 := w.literalWord(pe.Repl.Orig)
		with := ""
		ok2 := true
		if pe.Repl.With != nil {
			with, ok2 = w.literalWord(pe.Repl.With)
		}
		if !ok1 || !ok2 || strings.ContainsAny(orig, "*?[") || orig == "" {
			unknown(0)
			return
		}
		n := 1
		if pe.Repl.All {
			n = -1
		}
		b.addExpanded(strings.Replace(v.s, orig, with, n), ifs, quoted)
		return
	case pe.Exp == nil:
		if !ok {
			unknown(0)
			return
		}
		b.addValue(v, ifs, quoted)
		return
	}
	op := pe.Exp.Op
	empty := ok && v.exact() && v.s == ""
	switch op {
	case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.AssignUnset, syntax.AssignUnsetOrNull:
		useDefault := false
		switch {
		case ok && (op == syntax.DefaultUnset || op == syntax.AssignUnset):
		case ok:
			useDefault = empty
		default:
			useDefault = w.pick(pe, 2) == 1
		}
		switch {
		case useDefault:
			if pe.Exp.Word != nil {
				w.addParts(b, pe.Exp.Word.Parts, quoted, false)
			} else {
				b.has = b.has || quoted
			}
		case ok:
			b.addValue(v, ifs, quoted)
		default:
			unknown(unkNonEmpty)
		}
	case syntax.AlternateUnset, syntax.AlternateUnsetOrNull:
		useAlt := false
		switch {
		case ok && op == syntax.AlternateUnset:
			useAlt = true
		case ok:
			useAlt = !empty
		default:
			useAlt = w.pick(pe, 2) == 1
		}
		if useAlt && pe.Exp.Word != nil {
			w.addParts(b, pe.Exp.Word.Parts, quoted, false)
		} else if quoted {
			b.has = true
		}
	case syntax.ErrorUnset, syntax.ErrorUnsetOrNull:
		if ok {
			b.addValue(v, ifs, quoted)
		} else {
			unknown(unkNonEmpty)
		}
	case syntax.RemSmallSuffix, syntax.RemLargeSuffix, syntax.RemSmallPrefix, syntax.RemLargePrefix:
		pat, ok1 := w.literalWord(pe.Exp.Word)
		if !ok || !v.exact() || !ok1 || len(v.s) > 1024 {
			unknown(0)
			return
		}
		b.addExpanded(trimPattern(v.s, pat, op), ifs, quoted)
	case syntax.UpperFirst, syntax.UpperAll, syntax.LowerFirst, syntax.LowerAll:
		if !ok || !v.exact() {
			unknown(0)
			return
		}
		s := v.s
		switch op {
		case syntax.UpperAll:
			s = strings.ToUpper(s)
		case syntax.LowerAll:
			s = strings.ToLower(s)
		case syntax.UpperFirst:
			if s != "" {
				s = strings.ToUpper(s[:1]) + s[1:]
			}
		case syntax.LowerFirst:
			if s != "" {
				s = strings.ToLower(s[:1]) + s[1:]
			}
		}
		b.addExpanded(s, ifs, quoted)
	default:
		unknown(0)
	}
}

// trimPattern implements ${v#p}, ${v##p}, ${v%p} and ${v%%p}.
func trimPattern(s, pat string, op syntax.ParExpOperator) string {
	p := compilePattern(pat)
	// The shell's * matches '/' here; approximate with tDeep.
	for i := range p {
		if p[i].kind == tStar {
			p[i].kind = tDeep
		}
	}
	switch op {
	case syntax.RemSmallPrefix:
		for i := 0; i <= len(s); i++ {
			if matchLit(p, s[:i]) {
				return s[i:]
			}
		}
	case syntax.RemLargePrefix:
		for i := len(s); i >= 0; i-- {
			if matchLit(p, s[:i]) {
				return s[i:]
			}
		}
	case syntax.RemSmallSuffix:
		for i := len(s); i >= 0; i-- {
			if matchLit(p, s[i:]) {
				return s[:i]
			}
		}
	case syntax.RemLargeSuffix:
		for i := 0; i <= len(s); i++ {
			if matchLit(p, s[i:]) {
				return s[:i]
			}
		}
	}
	return s
}

// literalWord returns the value of a word with no expansions in it.
func (w *walker) literalWord(wd *syntax.Word) (string, bool) {
	if wd == nil {
		return "", true
	}
	f := w.expandString(wd)
	if !f.exact() {
		return "", false
	}
	return f.s, true
}

// arithLit returns the literal text of a simple index expression.
func arithLit(x syntax.ArithmExpr) string {
	if wd, ok := x.(*syntax.Word); ok {
		return wd.Lit()
	}
	return ""
}

// arith evaluates a constant arithmetic expression.
func (w *walker) arith(x syntax.ArithmExpr) (int, bool) {
	switch x := x.(type) {
	case *syntax.Word:
		s := x.Lit()
		if s == "" {
			return 0, false
		}
		if n, err := strconv.Atoi(s); err == nil {
			return n, true
		}
		if v, ok := w.lookupScalar(s); ok && v.exact() {
			n, err := strconv.Atoi(strings.TrimSpace(v.s))
			return n, err == nil
		}
		return 0, false
	case *syntax.ParenArithm:
		return w.arith(x.X)
	case *syntax.UnaryArithm:
		n, ok := w.arith(x.X)
		switch x.Op {
		case syntax.Minus:
			return -n, ok
		case syntax.Plus:
			return n, ok
		}
		return 0, false
	case *syntax.BinaryArithm:
		a, ok1 := w.arith(x.X)
		b, ok2 := w.arith(x.Y)
		if !ok1 || !ok2 {
			return 0, false
		}
		switch x.Op {
		case syntax.Add:
			return a + b, true
		case syntax.Sub:
			return a - b, true
		case syntax.Mul:
			return a * b, true
		case syntax.Quo:
			if b != 0 {
				return a / b, true
			}
		case syntax.Rem:
			if b != 0 {
				return a % b, true
			}
		}
	}
	return 0, false
}

// renderPayload turns a field into shell text for a nested parse: unknown
// parts become references to a variable the checker never binds, so that
// they stay unknown in the nested walk.
func renderPayload(f field) string {
	if f.exact() {
		return f.s
	}
	var b strings.Builder
	for _, k := range f.toks {
		switch k.kind {
		case tLit:
			b.WriteByte(k.b)
		case tAny:
			b.WriteByte('?')
		case tClass, tStar, tDeep:
			b.WriteByte('*')
		case tUnknown:
			b.WriteString("${__rigout_unknown}")
		}
	}
	return b.String()
}

// paramLabel shows a parameter expansion in a reason: $X, ${X…}.
func paramLabel(pe *syntax.ParamExp) string {
	if pe.Param == nil {
		return "${…}"
	}
	if pe.Short {
		return "$" + pe.Param.Value
	}
	if pe.Exp == nil && pe.Slice == nil && pe.Repl == nil && pe.Index == nil && !pe.Length && !pe.Excl {
		return "${" + pe.Param.Value + "}"
	}
	return "${" + pe.Param.Value + "…}"
}

// describeStmts names the first command of a substitution: $(curl …).
func describeStmts(stmts []*syntax.Stmt) string {
	if len(stmts) == 0 {
		return ""
	}
	d := describeStmt(stmts[0])
	if len(stmts) > 1 || d == "a command" || d == "a compound command" {
		return "…"
	}
	return d + " …"
}
