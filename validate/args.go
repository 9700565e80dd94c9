package validate

import "strings"

// optSyntax describes the options of a command.
type optSyntax struct {
	argShort string   // short options that take an argument
	argLong  []string // long options that take an argument when given without '='
	posix    bool     // options end at the first operand (wrappers)
}

type optVal struct {
	name string // a short letter or a long name
	val  field
}

// parsedArgs is a command line split into options and operands.
type parsedArgs struct {
	short   []byte
	long    []string
	vals    []optVal
	ops     []field
	rest    int  // with posix: index in args of the first operand
	unknown bool // a dynamic word may be an option
}

func parseArgs(args []field, syn *optSyntax) parsedArgs {
	var p parsedArgs
	p.rest = len(args)
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.exact() {
			if a.mayBeOption() {
				p.unknown = true
				if a.prefix() != "" {
					continue
				}
			}
			if syn.posix {
				p.rest = i
				p.ops = append(p.ops, args[i:]...)
				return p
			}
			p.ops = append(p.ops, a)
			continue
		}
		s := a.s
		switch {
		case s == "--":
			p.rest = i + 1
			p.ops = append(p.ops, args[i+1:]...)
			return p
		case strings.HasPrefix(s, "--"):
			name, val, hasVal := strings.Cut(s[2:], "=")
			if name == "" {
				continue // "--=": getopt refuses it
			}
			p.long = append(p.long, name)
			if hasVal {
				p.vals = append(p.vals, optVal{name: name, val: field{s: val, pos: a.pos}})
			} else if takesLong(syn.argLong, name) && i+1 < len(args) {
				i++
				p.vals = append(p.vals, optVal{name: fullLong(syn.argLong, name), val: args[i]})
			}
		case len(s) > 1 && s[0] == '-':
			for j := 1; j < len(s); j++ {
				c := s[j]
				p.short = append(p.short, c)
				if strings.IndexByte(syn.argShort, c) >= 0 {
					if j+1 < len(s) {
						p.vals = append(p.vals, optVal{name: string(c), val: field{s: s[j+1:], pos: a.pos}})
					} else if i+1 < len(args) {
						i++
						p.vals = append(p.vals, optVal{name: string(c), val: args[i]})
					}
					break
				}
			}
		default:
			if syn.posix {
				p.rest = i
				p.ops = append(p.ops, args[i:]...)
				return p
			}
			p.ops = append(p.ops, a)
		}
	}
	return p
}

// takesLong reports whether a (possibly abbreviated) long option takes an
// argument.
func takesLong(list []string, name string) bool {
	return fullLong(list, name) != ""
}

func fullLong(list []string, name string) string {
	if name == "" {
		return ""
	}
	match := ""
	for _, l := range list {
		if l == name {
			return l
		}
		if len(name) >= 2 && strings.HasPrefix(l, name) {
			if match != "" {
				return match // ambiguous: getopt refuses; assume the first
			}
			match = l
		}
	}
	return match
}

func (p *parsedArgs) hasShort(c byte) bool {
	for _, s := range p.short {
		if s == c {
			return true
		}
	}
	return false
}

// hasLong reports whether a long option that abbreviates full (at least
// min bytes long) was given.
func (p *parsedArgs) hasLong(full string, min int) bool {
	for _, l := range p.long {
		if len(l) >= min && strings.HasPrefix(full, l) {
			return true
		}
	}
	return false
}

// val returns the last value of an option given by short letter or long
// name.
func (p *parsedArgs) val(short byte, long string) (field, bool) {
	var out field
	found := false
	for _, v := range p.vals {
		if short != 0 && v.name == string(short) || long != "" && len(v.name) >= 2 && strings.HasPrefix(long, v.name) {
			out, found = v.val, true
		}
	}
	return out, found
}

// has reports whether any of the short letters or long names was given.
func (p *parsedArgs) has(shorts string, longs ...string) bool {
	for i := 0; i < len(shorts); i++ {
		if p.hasShort(shorts[i]) {
			return true
		}
	}
	for _, l := range longs {
		if p.hasLong(l, min(len(l), 3)) {
			return true
		}
	}
	return false
}

// onlyInfo reports whether the arguments only ask for help or a version.
func onlyInfo(args []field) bool {
	if len(args) == 0 {
		return false
	}
	for _, a := range args {
		if !a.exact() {
			return false
		}
		switch a.s {
		case "--help", "-h", "--version", "-V", "--usage", "-?":
		default:
			return false
		}
	}
	return true
}

// isAssignment reports whether s looks like NAME=value.
func isAssignment(s string) bool {
	i := strings.IndexByte(s, '=')
	if i <= 0 {
		return false
	}
	for j := 0; j < i; j++ {
		c := s[j]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || j > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// substField replaces marker in f with v (find's {}, xargs -I).
func substField(f field, marker string, v field) field {
	if !f.exact() || !strings.Contains(f.s, marker) {
		return f
	}
	if f.s == marker {
		out := v
		out.pos = f.pos
		return out
	}
	if v.exact() {
		return field{s: strings.ReplaceAll(f.s, marker, v.s), pos: f.pos, taint: v.taint}
	}
	var parts []field
	for i, p := range strings.Split(f.s, marker) {
		if i > 0 {
			parts = append(parts, v)
		}
		parts = append(parts, exactField(p))
	}
	out := concatFields(parts, "")
	out.pos = f.pos
	return out
}

// splitUnknown splits fields at unquoted unknown expansions, for the case
// where the expansion holds IFS characters: rm${X}-rf${X}/ may be
// "rm -rf /".
func splitUnknown(argv []field) []field {
	out := make([]field, 0, len(argv)+4)
	for _, f := range argv {
		if !f.split {
			out = append(out, f)
			continue
		}
		start := 0
		for i := 0; i <= len(f.toks); i++ {
			if i < len(f.toks) && f.toks[i].kind != tUnknown {
				continue
			}
			if i > start {
				seg := f.toks[start:i]
				nf := field{pos: f.pos, taint: f.taint}
				if allLit(seg) {
					nf.s = litString(seg)
				} else {
					nf.toks = seg
					nf.s = tokString(seg)
				}
				out = append(out, nf)
			}
			start = i + 1
		}
	}
	return out
}

func anySplit(argv []field) bool {
	for _, f := range argv {
		if f.split {
			return true
		}
	}
	return false
}
