package validate

import (
	"path"
	"strings"
)

// A pattern is a path or argument whose exact value is not known before the
// shell runs: it holds glob wildcards, unknown expansions, or both. Patterns
// are sequences of tokens; a plain literal argument is kept as a string and
// never turned into tokens.

type tokKind uint8

const (
	tLit     tokKind = iota // one literal byte
	tAny                    // ? : one byte other than '/'
	tClass                  // [...] : one byte of a set, never '/'
	tStar                   // * : a run of bytes without '/', possibly empty
	tDeep                   // ** in configured patterns: any run of bytes, '/' included
	tUnknown                // an unknown expansion: a run of bytes without '/'
	tCwd                    // the working directory when it is unknown ($PWD, $(pwd))
)

// Flags on tUnknown tokens.
const (
	unkNonEmpty uint8 = 1 << iota // ${X:?}, $RANDOM: never empty
	unkNoFlag                     // a number or similar: never starts with '-'
	unkNumber                     // a number: $((…)), $#, $(wc -l …); safe to evaluate as arithmetic
)

type ptok struct {
	kind tokKind
	b    byte     // the byte of a tLit; the flags of a tUnknown
	cls  *byteSet // the set of a tClass
}

// byteSet is a set of bytes.
type byteSet [4]uint64

func (s *byteSet) add(c byte)            { s[c>>6] |= 1 << (c & 63) }
func (s *byteSet) has(c byte) bool       { return s[c>>6]&(1<<(c&63)) != 0 }
func (s *byteSet) meets(o *byteSet) bool { return s[0]&o[0]|s[1]&o[1]|s[2]&o[2]|s[3]&o[3] != 0 }

func isWild(t ptok) bool {
	return t.kind == tAny || t.kind == tClass || t.kind == tStar || t.kind == tDeep
}

// litToks turns a literal string into tokens.
func litToks(s string) []ptok {
	t := make([]ptok, len(s))
	for i := 0; i < len(s); i++ {
		t[i] = ptok{kind: tLit, b: s[i]}
	}
	return t
}

// parseClass parses the bracket expression starting at s[0] == '['. It
// returns the set and the length consumed, or ok false when the bracket is
// not closed (then '[' is literal, as in the shell).
func parseClass(s string) (set *byteSet, n int, ok bool) {
	i := 1
	neg := false
	if i < len(s) && (s[i] == '!' || s[i] == '^') {
		neg = true
		i++
	}
	set = new(byteSet)
	first := true
	for i < len(s) {
		c := s[i]
		if c == ']' && !first {
			if neg {
				for k := range set {
					set[k] = ^set[k]
				}
			}
			// A class never matches '/' in a path.
			set[0] &^= 1 << '/'
			return set, i + 1, true
		}
		first = false
		if c == '[' && i+1 < len(s) && s[i+1] == ':' {
			end := strings.Index(s[i+2:], ":]")
			if end < 0 {
				return nil, 0, false
			}
			addNamedClass(set, s[i+2:i+2+end])
			i += end + 4
			continue
		}
		if c == '\\' && i+1 < len(s) {
			i++
			c = s[i]
		}
		if i+2 < len(s) && s[i+1] == '-' && s[i+2] != ']' {
			hi := s[i+2]
			for x := int(c); x <= int(hi); x++ {
				set.add(byte(x))
			}
			i += 3
			continue
		}
		set.add(c)
		i++
	}
	return nil, 0, false
}

func addNamedClass(set *byteSet, name string) {
	for x := 0; x < 256; x++ {
		c := byte(x)
		var in bool
		switch name {
		case "alpha":
			in = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		case "digit":
			in = c >= '0' && c <= '9'
		case "alnum":
			in = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		case "lower":
			in = c >= 'a' && c <= 'z'
		case "upper":
			in = c >= 'A' && c <= 'Z'
		case "space", "blank":
			in = c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
		case "xdigit":
			in = c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
		default: // punct, print, graph, cntrl and unknown names: anything
			in = true
		}
		if in {
			set.add(c)
		}
	}
}

// compilePattern parses a configured glob pattern: *, ?, [...] and ** (which
// also crosses '/'); a backslash quotes the next byte.
func compilePattern(s string) []ptok {
	var t []ptok
	lastClose := strings.LastIndexByte(s, ']')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\':
			if i+1 < len(s) {
				i++
			}
			t = append(t, ptok{kind: tLit, b: s[i]})
		case '*':
			if i+1 < len(s) && s[i+1] == '*' {
				t = append(t, ptok{kind: tDeep})
				i++
				continue
			}
			t = append(t, ptok{kind: tStar})
		case '?':
			t = append(t, ptok{kind: tAny})
		case '[':
			if set, n, ok := parseClass(s[i:]); i < lastClose && ok {
				t = append(t, ptok{kind: tClass, cls: set})
				i += n - 1
				continue
			}
			t = append(t, ptok{kind: tLit, b: c})
		default:
			t = append(t, ptok{kind: tLit, b: c})
		}
	}
	return t
}

// tokString renders tokens for people: wildcards as in the shell, unknown
// expansions as "$…".
func tokString(t []ptok) string {
	var b strings.Builder
	for _, k := range t {
		switch k.kind {
		case tLit:
			b.WriteByte(k.b)
		case tAny:
			b.WriteByte('?')
		case tClass:
			b.WriteString("[…]")
		case tStar:
			b.WriteByte('*')
		case tDeep:
			b.WriteString("**")
		case tUnknown:
			b.WriteString("$…")
		case tCwd:
			b.WriteString("$PWD")
		}
	}
	return b.String()
}

// single reports whether token k can stand for the one byte c.
func single(k ptok, c byte) bool {
	switch k.kind {
	case tLit:
		return k.b == c
	case tAny:
		return c != '/'
	case tClass:
		return k.cls.has(c)
	}
	return false
}

// runs reports whether k consumes a run of bytes, and whether that run may
// hold '/'.
func runs(k ptok) (run, slash bool) {
	switch k.kind {
	case tStar, tUnknown:
		return true, false
	case tDeep, tCwd:
		return true, true
	}
	return false, false
}

func minLen(k ptok) int {
	if k.kind == tUnknown && k.b&unkNonEmpty != 0 || k.kind == tCwd {
		return 1
	}
	if r, _ := runs(k); r {
		return 0
	}
	return 1
}

// matchLit reports whether pattern p can produce exactly s. It runs in
// O(len(p)·len(s)) time.
func matchLit(p []ptok, s string) bool {
	n := len(s)
	var buf [2][65]bool
	var cur, next []bool
	if n < 64 {
		cur, next = buf[0][:n+1], buf[1][:n+1]
	} else {
		cur, next = make([]bool, n+1), make([]bool, n+1)
	}
	cur[0] = true
	for _, k := range p {
		run, slash := runs(k)
		any := false
		if run {
			empty := minLen(k) == 0
			for i := 0; i <= n; i++ {
				ok := i > 0 && (slash || s[i-1] != '/')
				if empty {
					next[i] = cur[i] || ok && next[i-1]
				} else {
					next[i] = ok && (cur[i-1] || next[i-1])
				}
				any = any || next[i]
			}
		} else {
			next[0] = false
			for i := 1; i <= n; i++ {
				next[i] = cur[i-1] && single(k, s[i-1])
				any = any || next[i]
			}
		}
		if !any {
			return false
		}
		cur, next = next, cur
	}
	return cur[n]
}

// intersects reports whether two patterns can produce a common string.
func intersects(a, b []ptok) bool {
	w := len(b) + 1
	seen := make([]bool, (len(a)+1)*w)
	var rec func(i, j int) bool
	rec = func(i, j int) bool {
		if seen[i*w+j] {
			return false
		}
		seen[i*w+j] = true
		if i == len(a) && j == len(b) {
			return true
		}
		var ka, kb ptok
		var runA, slA, runB, slB bool
		if i < len(a) {
			ka = a[i]
			runA, slA = runs(ka)
		}
		if j < len(b) {
			kb = b[j]
			runB, slB = runs(kb)
		}
		// A run may end here (if it may be empty).
		if runA && minLen(ka) == 0 && rec(i+1, j) {
			return true
		}
		if runB && minLen(kb) == 0 && rec(i, j+1) {
			return true
		}
		if i == len(a) || j == len(b) {
			return false
		}
		switch {
		case runA && runB:
			// Both runs share content: one absorbs a step of the other.
			return rec(i, j+1) || rec(i+1, j) || rec(i+1, j+1)
		case runA:
			if kb.kind == tLit && kb.b == '/' && !slA {
				return false
			}
			return rec(i, j+1) || rec(i+1, j+1)
		case runB:
			if ka.kind == tLit && ka.b == '/' && !slB {
				return false
			}
			return rec(i+1, j) || rec(i+1, j+1)
		}
		return singlesMeet(ka, kb) && rec(i+1, j+1)
	}
	return rec(0, 0)
}

func singlesMeet(a, b ptok) bool {
	switch {
	case a.kind == tLit:
		return single(b, a.b)
	case b.kind == tLit:
		return single(a, b.b)
	case a.kind == tClass && b.kind == tClass:
		return a.cls.meets(b.cls)
	}
	return true // ? against ? or a class
}

// splitToks splits tokens at literal slashes.
func splitToks(t []ptok) [][]ptok {
	var out [][]ptok
	start := 0
	for i, k := range t {
		if k.kind == tLit && k.b == '/' {
			out = append(out, t[start:i])
			start = i + 1
		}
	}
	return append(out, t[start:])
}

func compIs(c []ptok, s string) bool {
	if len(c) != len(s) {
		return false
	}
	for i, k := range c {
		if k.kind != tLit || k.b != s[i] {
			return false
		}
	}
	return true
}

// onlyUnknown reports whether a component is made of unknown expansions that
// may all be empty.
func onlyUnknown(c []ptok) bool {
	if len(c) == 0 {
		return false
	}
	for _, k := range c {
		if k.kind != tUnknown || k.b&unkNonEmpty != 0 {
			return false
		}
	}
	return true
}

// allChildren reports whether a path component is made only of wildcards (and
// unknown expansions), so that it matches every entry of its directory, or
// every hidden entry (.*).
func allChildren(c []ptok) bool {
	if len(c) > 1 && c[0].kind == tLit && c[0].b == '.' {
		c = c[1:]
	}
	wild := false
	for _, k := range c {
		switch {
		case isWild(k):
			wild = true
		case k.kind == tUnknown:
		default:
			return false
		}
	}
	return wild
}

// cleanToks cleans a path pattern lexically like path.Clean. Unknown
// components that may be empty are resolved both ways, so it returns up to a
// few variants.
func cleanToks(t []ptok) [][]ptok {
	comps := splitToks(t)
	abs := len(t) > 0 && t[0].kind == tLit && t[0].b == '/'
	if abs {
		return cleanComps(comps[1:], true)
	}
	if len(comps) > 1 && onlyUnknown(comps[0]) {
		// "$X/..." is absolute when $X is empty.
		return append(cleanComps(comps[1:], true), cleanComps(comps, false)...)
	}
	return cleanComps(comps, false)
}

func cleanComps(comps [][]ptok, abs bool) [][]ptok {
	variants := [][][]ptok{nil}
	for _, c := range comps {
		if onlyUnknown(c) && len(variants) < 8 {
			// Either empty (dropped) or a name.
			n := len(variants)
			for v := 0; v < n; v++ {
				variants = append(variants, appendComp(variants[v], c))
			}
			continue
		}
		for v := range variants {
			variants[v] = appendComp(variants[v], c)
		}
	}
	out := make([][]ptok, 0, len(variants))
	for _, v := range variants {
		out = append(out, joinComps(v, abs))
	}
	return out
}

func appendComp(list [][]ptok, c []ptok) [][]ptok {
	switch {
	case len(c) == 0 || compIs(c, "."):
		return list
	case compIs(c, ".."):
		if len(list) > 0 && !compIs(list[len(list)-1], "..") {
			return list[: len(list)-1 : len(list)-1]
		}
	}
	return append(list[:len(list):len(list)], c)
}

func joinComps(list [][]ptok, abs bool) []ptok {
	var t []ptok
	if abs {
		t = append(t, ptok{kind: tLit, b: '/'})
		// ".." above the root stays at the root.
		for len(list) > 0 && compIs(list[0], "..") {
			list = list[1:]
		}
	}
	for i, c := range list {
		if i > 0 {
			t = append(t, ptok{kind: tLit, b: '/'})
		}
		t = append(t, c...)
	}
	if len(t) == 0 {
		t = append(t, ptok{kind: tLit, b: '.'})
	}
	return t
}

// cleanPath is path.Clean for a literal path.
func cleanPath(p string) string {
	if p == "" {
		return ""
	}
	return path.Clean(p)
}
