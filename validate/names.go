package validate

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Names and arithmetic that bash evaluates.
//
// Wherever bash takes a variable name (test -v, [[ -v ]], read, printf -v,
// mapfile, unset, getopts, wait -p, declare and its relatives, ${!ref},
// declare -n targets) a subscript in the name is expanded and evaluated as
// arithmetic, and arithmetic (let, (( )), $(( )), array indices, slices,
// [[ a -eq b ]], declare -i values) evaluates the value of every variable
// it names as arithmetic again. Either way a subscript runs the command
// substitutions it holds: test -v 'x[$(rm -rf /)]' runs rm. The functions
// here judge such text as code: a subscript is parsed and walked like any
// shell word, a variable's known value is evaluated in turn, and what the
// checker cannot see (a name known only at run time, arithmetic on a value
// read from a command's output or from input, prompt expansion of unknown
// text) is refused with RuleHiddenCode.

// maxArithDepth bounds the nesting of values evaluated in arithmetic.
const maxArithDepth = 8

// evalName judges a word bash takes as a variable name and evaluates.
func (w *walker) evalName(inv *invocation, f field, what string) {
	if !f.exact() {
		w.report(inv, RuleHiddenCode, what+" takes the variable name "+f.show()+at(f.pos)+", known only at run time; bash evaluates a subscript in a name as code")
		return
	}
	i := strings.IndexByte(f.s, '[')
	if i < 0 {
		return
	}
	sub := f.s[i+1:]
	if j := strings.LastIndexByte(sub, ']'); j >= 0 {
		sub = sub[:j]
	}
	w.subscript(inv, sub, f.pos, what+" name "+f.s[:i]+"[…]", 0)
}

// subscript judges the text of a subscript: bash expands it like a word in
// double quotes (running its substitutions) and evaluates the result as
// arithmetic.
func (w *walker) subscript(inv *invocation, sub string, pos syntax.Pos, what string, depth int) {
	if depth > maxArithDepth {
		w.report(inv, RuleHiddenCode, what+at(pos)+" nests evaluated subscripts more than "+itoa(maxArithDepth)+" deep")
		return
	}
	text := sub
	if strings.ContainsAny(sub, "$`\\'\"") {
		wd, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Document(strings.NewReader(sub))
		if err != nil {
			w.report(inv, RuleHiddenCode, "the subscript of the "+what+at(pos)+" is evaluated as code by bash and does not parse: "+err.Error())
			return
		}
		if w.depth+1 > maxDepth {
			w.complex("evaluated subscripts are nested more than " + itoa(maxDepth) + " deep")
			return
		}
		c := w.child("subscript of the "+what, pos, nil, nil)
		c.scan(wd, nil)
		c.finish()
		if w.dataIn(wd) {
			w.report(inv, RuleHiddenCode, "the subscript of the "+what+at(pos)+" evaluates, as arithmetic, a value the checker cannot see (a command's output or input read); a subscript in it would run as code")
			return
		}
		f := w.expandString(wd)
		text = literalOf(f)
	}
	w.arithText(inv, text, pos, what, depth+1)
}

// literalOf renders a field with its unknown parts as 0.
func literalOf(f field) string {
	if f.exact() {
		return f.s
	}
	var b strings.Builder
	for _, k := range f.toks {
		switch k.kind {
		case tLit:
			b.WriteByte(k.b)
		default:
			b.WriteByte('0')
		}
	}
	return b.String()
}

// arithText judges text that bash evaluates as arithmetic without
// expanding it first: the value of a variable named in arithmetic, the
// operands of [[ a -eq b ]] after their expansion, let's arguments. Names
// in it are evaluated in turn; subscripts are expanded and evaluated.
func (w *walker) arithText(inv *invocation, s string, pos syntax.Pos, what string, depth int) {
	if depth > maxArithDepth {
		w.report(inv, RuleHiddenCode, what+at(pos)+" evaluates values nested more than "+itoa(maxArithDepth)+" deep")
		return
	}
	if strings.ContainsAny(s, "$`") {
		// Where bash expands the text again (an array index written
		// x['$(…)']=1), the substitution runs; elsewhere it is an error.
		// Either way it is judged as code.
		w.subscript(inv, s, pos, what, depth)
		return
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			// A number, in any base (0x1f, 16#ff, 64#_@): its digits are
			// not names.
			for i < len(s) && (isNameByte(s[i]) || s[i] == '#' || s[i] == '@') {
				i++
			}
		case isNameByte(c):
			j := i
			for j < len(s) && isNameByte(s[j]) {
				j++
			}
			name := s[i:j]
			if j < len(s) && s[j] == '[' {
				end := matchBracket(s, j)
				if end < 0 {
					w.report(inv, RuleHiddenCode, "the arithmetic of the "+what+at(pos)+" has an unclosed subscript")
					return
				}
				w.subscript(inv, s[j+1:end], pos, what, depth)
				j = end + 1
			}
			w.arithVar(inv, name, pos, what, depth)
			i = j
		default:
			i++
		}
	}
}

func isNameByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// matchBracket returns the index of the ']' that closes the '[' at s[i],
// or -1.
func matchBracket(s string, i int) int {
	n := 0
	for k := i; k < len(s); k++ {
		switch s[k] {
		case '[':
			n++
		case ']':
			n--
			if n == 0 {
				return k
			}
		}
	}
	return -1
}

// arithVar judges a variable that arithmetic evaluates: its value is
// arithmetic text too. A variable the line never set comes from the
// environment, which is judged apart (Policy.CheckEnv); one it set to a
// value the checker cannot see (a command's output, input read) is
// refused, unless the value is known to be a number.
func (w *walker) arithVar(inv *invocation, name string, pos syntax.Pos, what string, depth int) {
	bnd := w.vars[name]
	if bnd == nil {
		return
	}
	for _, v := range bnd.alts {
		fs := []field{v.f}
		if v.isArr {
			fs = v.arr
		}
		for _, f := range fs {
			switch {
			case f.exact():
				if f.s != "" && !isDigits(strings.TrimSpace(f.s)) {
					w.arithText(inv, f.s, pos, what+" (the value of "+name+")", depth+1)
				}
			case !numeric(f):
				w.report(inv, RuleHiddenCode, "the "+what+at(pos)+" evaluates $"+name+" as arithmetic, and its value ("+f.show()+") is only known at run time; bash runs a subscript in it (x[$(…)]) as code")
				return
			}
		}
	}
}

// numeric reports whether every unknown part of a field is a number.
func numeric(f field) bool {
	for _, k := range f.toks {
		if k.kind == tUnknown && k.b&unkNumber == 0 {
			return false
		}
	}
	return true
}

// dataIn reports whether a word bash evaluates as arithmetic holds a value
// the checker cannot see: the output of a command not known to print a
// number, a variable set to such a value, an indirect or prompt
// expansion.
func (w *walker) dataIn(wd *syntax.Word) bool {
	found := false
	syntax.Walk(wd, func(n syntax.Node) bool {
		if found {
			return false
		}
		switch n := n.(type) {
		case *syntax.CmdSubst:
			if !numericProducer(n.Stmts) {
				found = true
			}
			return false
		case *syntax.ProcSubst:
			return false
		case *syntax.ParamExp:
			if n.Excl || (n.Exp != nil && n.Exp.Op == syntax.OtherParamOps) {
				found = true
				return false
			}
			if n.Param != nil && !n.Length && w.dataVar(n.Param.Value) {
				found = true
			}
		}
		return true
	})
	return found
}

// dataVar reports whether the line set a variable to a value the checker
// cannot see and that is not known to be a number.
func (w *walker) dataVar(name string) bool {
	bnd := w.vars[name]
	if bnd == nil {
		return false
	}
	for _, v := range bnd.alts {
		fs := []field{v.f}
		if v.isArr {
			fs = v.arr
		}
		for _, f := range fs {
			if !f.exact() && !numeric(f) {
				return true
			}
		}
	}
	return false
}

// numericProducer reports whether a command substitution prints only a
// number: wc, nproc, getconf, id -u/-g, grep -c and seq without a format,
// as the last command of its pipeline.
func numericProducer(stmts []*syntax.Stmt) bool {
	if len(stmts) != 1 || stmts[0] == nil {
		return false
	}
	cmd := stmts[0].Cmd
	for {
		bc, ok := cmd.(*syntax.BinaryCmd)
		if !ok || (bc.Op != syntax.Pipe && bc.Op != syntax.PipeAll) {
			break
		}
		cmd = bc.Y.Cmd
	}
	ce, ok := cmd.(*syntax.CallExpr)
	if !ok || len(ce.Args) == 0 {
		return false
	}
	var args []string
	for _, a := range ce.Args {
		s, ok := quickLit(a)
		if !ok {
			return false
		}
		args = append(args, s)
	}
	switch args[0] {
	case "wc", "nproc", "getconf":
		return true
	case "id":
		return len(args) == 2 && (args[1] == "-u" || args[1] == "-g")
	case "grep":
		return slices.Contains(args[1:], "-c")
	case "seq":
		for _, a := range args[1:] {
			if strings.HasPrefix(a, "-") && !isDigits(strings.TrimPrefix(a, "-")) {
				return false
			}
		}
		return true
	}
	return false
}

// arithLeaves judges a parsed arithmetic expression ($((…)), ((…)), let,
// an index): each operand that names a variable has its value evaluated,
// and each operand built by expansion is evaluated as arithmetic text.
// Command substitutions inside are walked by scan, not here.
func (w *walker) arithLeaves(x syntax.ArithmExpr, what string) {
	switch x := x.(type) {
	case nil:
	case *syntax.BinaryArithm:
		w.arithLeaves(x.X, what)
		w.arithLeaves(x.Y, what)
	case *syntax.UnaryArithm:
		w.arithLeaves(x.X, what)
	case *syntax.ParenArithm:
		w.arithLeaves(x.X, what)
	case *syntax.Word:
		if lit := x.Lit(); lit != "" {
			if !isDigits(lit) && (lit[0] < '0' || lit[0] > '9') {
				w.arithText(nil, lit, x.Pos(), what, 0)
			}
			return
		}
		if len(x.Parts) == 1 {
			if pe, ok := x.Parts[0].(*syntax.ParamExp); ok && pe.Param != nil && !pe.Excl && !pe.Length && pe.Exp == nil && pe.Repl == nil && pe.Slice == nil {
				// $y, ${y}, x[i]: the value is evaluated in turn (the
				// index is judged where scan meets the ParamExp).
				w.arithVar(nil, pe.Param.Value, x.Pos(), what, 0)
				return
			}
		}
		if w.dataIn(x) {
			w.report(nil, RuleHiddenCode, "the "+what+at(x.Pos())+" evaluates as arithmetic a value the checker cannot see (a command's output or input read); bash runs a subscript in it (x[$(…)]) as code")
			return
		}
		f := w.expandString(x)
		w.arithText(nil, literalOf(f), x.Pos(), what, 0)
	}
}

// paramCode judges the parts of a parameter expansion that bash evaluates:
// an index or slice (arithmetic), the name an indirect ${!ref} holds, and
// ${x@P}, which expands its value as a prompt, running the command
// substitutions in it.
func (w *walker) paramCode(pe *syntax.ParamExp) {
	if pe.Index != nil {
		if lit := arithLit(pe.Index); lit != "@" && lit != "*" {
			w.arithLeaves(pe.Index, "index of ${"+paramName(pe)+"[…]}")
		}
	}
	if pe.Slice != nil {
		w.arithLeaves(pe.Slice.Offset, "offset of ${"+paramName(pe)+":…}")
		w.arithLeaves(pe.Slice.Length, "length of ${"+paramName(pe)+":…}")
	}
	if pe.Param == nil {
		return
	}
	name := pe.Param.Value
	if pe.Excl && pe.Names == 0 && (pe.Index == nil || (arithLit(pe.Index) != "@" && arithLit(pe.Index) != "*")) {
		// ${!ref}: the variable ref names, subscript included.
		ref, ok := w.lookupScalar(name)
		if !ok {
			w.report(nil, RuleHiddenCode, "${!"+name+"}"+at(pe.Pos())+" expands the variable that $"+name+" names, known only at run time; bash evaluates a subscript in that name as code")
		} else {
			w.evalName(nil, ref, "indirect expansion ${!"+name+"}")
		}
	}
	if pe.Exp != nil && pe.Exp.Op == syntax.OtherParamOps && pe.Exp.Word != nil && pe.Exp.Word.Lit() == "P" {
		v, ok := w.lookupScalar(name)
		if !ok || !v.exact() {
			w.report(nil, RuleHiddenCode, "${"+name+"@P}"+at(pe.Pos())+" expands the value of $"+name+" as a prompt, running the command substitutions in it, and that value is only known at run time")
			return
		}
		if strings.ContainsAny(v.s, "$`") {
			w.promptCode(v, "prompt expansion ${"+name+"@P}")
		}
	}
}

func paramName(pe *syntax.ParamExp) string {
	if pe.Param == nil {
		return "…"
	}
	return pe.Param.Value
}

// promptCode judges text that bash expands like a prompt or a word in
// double quotes: the command substitutions in it run.
func (w *walker) promptCode(v field, label string) {
	wd, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Document(strings.NewReader(v.s))
	if err != nil {
		w.report(nil, RuleHiddenCode, "the "+label+at(v.pos)+" expands text that does not parse: "+err.Error())
		return
	}
	if w.depth+1 > maxDepth {
		w.complex("evaluated text is nested more than " + itoa(maxDepth) + " deep")
		return
	}
	c := w.child(label, v.pos, nil, nil)
	c.scan(wd, nil)
	c.finish()
}

// testExpr judges the parts of [[ … ]] that bash evaluates: the name of
// -v and -R, and the operands of the arithmetic comparisons.
func (w *walker) testExpr(x syntax.TestExpr) {
	switch x := x.(type) {
	case *syntax.BinaryTest:
		switch x.Op {
		case syntax.AndTest, syntax.OrTest:
			w.testExpr(x.X)
			w.testExpr(x.Y)
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			for _, op := range []syntax.TestExpr{x.X, x.Y} {
				if wd, ok := op.(*syntax.Word); ok {
					w.arithLeaves(wd, "[[ "+x.Op.String()+" ]] operand")
				}
			}
		}
	case *syntax.UnaryTest:
		switch x.Op {
		case syntax.TsVarSet, syntax.TsRefVar:
			if wd, ok := x.X.(*syntax.Word); ok {
				w.evalName(nil, w.expandString(wd), "[[ "+x.Op.String()+" ]]")
			}
		case syntax.TsNot:
			w.testExpr(x.X)
		}
	case *syntax.ParenTest:
		w.testExpr(x.X)
	}
}

// testCmd judges test and [: -v and -R take a variable name.
func (w *walker) testCmd(inv *invocation, name string) {
	args := inv.args()
	for i, a := range args {
		if a.exact() && (a.s == "-v" || a.s == "-R") && i+1 < len(args) {
			w.evalName(inv, args[i+1], name+" "+a.s)
		}
	}
}

// nameOperands judges the variable names that read, mapfile, readarray,
// printf -v, getopts, unset and wait -p assign or test, and mapfile's -C
// callback, which bash runs as a command.
func (w *walker) nameOperands(inv *invocation, name string) {
	args := inv.args()
	switch name {
	case "printf":
		if len(args) >= 2 && args[0].exact() && args[0].s == "-v" {
			w.evalName(inv, args[1], "printf -v")
		}
		return
	case "getopts":
		if len(args) >= 2 {
			w.evalName(inv, args[1], "getopts")
		}
		return
	case "wait":
		for i, a := range args {
			if a.exact() && a.s == "-p" && i+1 < len(args) {
				w.evalName(inv, args[i+1], "wait -p")
			}
		}
		return
	case "unset":
		for _, a := range args {
			if !a.exact() || !strings.HasPrefix(a.s, "-") {
				w.evalName(inv, a, "unset")
			}
		}
		return
	}
	syn := optSyntax{argShort: "adinNptu"}
	if name != "read" {
		syn = optSyntax{argShort: "dnOsuCc"}
	}
	p := parseArgs(args, &syn)
	if name == "read" {
		if v, ok := p.val('a', ""); ok {
			w.evalName(inv, v, "read -a")
		}
	} else if v, ok := p.val('C', ""); ok {
		w.payload(inv, v, name+" -C callback", nil, false)
	}
	for _, o := range p.ops {
		w.evalName(inv, o, name)
	}
}

// declArgs judges the names and values of declare, typeset, local,
// export, readonly and nameref: a subscript in a name is evaluated, the
// target of -n is a name evaluated at each use, a value of -i is
// arithmetic, and a quoted compound value of -a or -A ('([k]=v)') is
// parsed as an assignment.
func (w *walker) declArgs(c *syntax.DeclClause) {
	variant := ""
	if c.Variant != nil {
		variant = c.Variant.Value
	}
	nameref, integer, array := variant == "nameref", false, false
	for _, a := range c.Args {
		if a.Naked && a.Name != nil && a.Value == nil {
			// declare -i n: a plain name.
			if integer {
				w.markInt(a.Name.Value)
			}
			continue
		}
		if !a.Naked || a.Value == nil {
			continue
		}
		f := w.expandString(a.Value)
		if f.exact() && (strings.HasPrefix(f.s, "-") || strings.HasPrefix(f.s, "+")) {
			if strings.HasPrefix(f.s, "-") {
				nameref = nameref || strings.ContainsRune(f.s, 'n')
				integer = integer || strings.ContainsRune(f.s, 'i')
				array = array || strings.ContainsAny(f.s, "aA")
			}
			continue
		}
		// declare 'NAME=VALUE' as one word: bash splits it at '='.
		nameF, valF, hasVal := f, field{}, false
		if f.exact() {
			if k := strings.IndexByte(f.s, '='); k >= 0 {
				nameF, valF, hasVal = field{s: f.s[:k], pos: f.pos}, field{s: f.s[k+1:], pos: f.pos}, true
			}
		} else if p := f.prefix(); strings.Contains(p, "=") {
			k := strings.IndexByte(p, '=')
			nameF, valF, hasVal = field{s: p[:k], pos: f.pos}, unknownField(0), true
		}
		w.evalName(nil, nameF, variant)
		if integer && nameF.exact() && isAssignment(nameF.s+"=") {
			w.markInt(nameF.s)
		}
		if hasVal {
			w.declValue(valF, variant, nameref, integer, array)
		}
	}
	for _, a := range c.Args {
		if a.Naked || a.Name == nil {
			continue
		}
		if a.Index != nil {
			w.arithLeaves(a.Index, "index of "+a.Name.Value+"[…] in "+variant)
		}
		if integer {
			w.markInt(a.Name.Value)
		}
		if a.Value != nil {
			w.declValue(w.expandString(a.Value), variant, nameref, integer, array)
		}
	}
}

func (w *walker) declValue(v field, variant string, nameref, integer, array bool) {
	switch {
	case nameref:
		w.evalName(nil, v, variant+" -n target")
	case integer:
		if !v.exact() && !numeric(v) {
			w.report(nil, RuleHiddenCode, "the "+variant+" -i value "+v.show()+at(v.pos)+" is evaluated as arithmetic and is only known at run time; bash runs a subscript in it as code")
			return
		}
		w.arithText(nil, literalOf(v), v.pos, variant+" -i value", 0)
	case array:
		if !v.exact() {
			if strings.HasPrefix(v.prefix(), "(") {
				w.report(nil, RuleHiddenCode, "the "+variant+" compound value "+v.show()+at(v.pos)+" is parsed by bash as an assignment and is only known at run time")
			}
			return
		}
		if strings.HasPrefix(v.s, "(") {
			file, err := parse("__rigout_a=" + v.s)
			if err != nil {
				w.report(nil, RuleHiddenCode, "the "+variant+" compound value"+at(v.pos)+" is parsed by bash as an assignment and does not parse: "+err.Error())
				return
			}
			c := w.child(variant+" compound value", v.pos, nil, nil)
			c.stmts(file.Stmts, nil)
			c.finish()
		}
	}
}

// promptVar judges an assignment to a variable an interactive shell runs
// or expands before each prompt: PROMPT_COMMAND is a command, PS0, PS1,
// PS2 and PS4 are expanded like ${x@P}, running their substitutions. In a
// terminal session the next prompt runs them, after the line was judged.
func (w *walker) promptVar(a *syntax.Assign) {
	name := a.Name.Value
	if name != "PROMPT_COMMAND" && name != "PS0" && name != "PS1" && name != "PS2" && name != "PS4" {
		return
	}
	var vals []field
	switch {
	case a.Array != nil:
		for _, e := range a.Array.Elems {
			if e.Value != nil {
				vals = append(vals, w.expandString(e.Value))
			}
		}
	case a.Value != nil:
		vals = append(vals, w.expandString(a.Value))
	}
	for _, v := range vals {
		switch {
		case !v.exact():
			w.report(nil, RuleHiddenCode, "the "+name+" assignment"+at(a.Pos())+" sets code an interactive shell runs before each prompt, and its value "+v.show()+" is only known at run time")
		case name == "PROMPT_COMMAND":
			w.payload(&invocation{argv: []field{{s: name}}}, v, "PROMPT_COMMAND", nil, false)
		case strings.ContainsAny(v.s, "$`"):
			w.promptCode(v, name+" prompt")
		}
	}
}

// markInt records that a variable has the integer attribute: every later
// assignment to it is evaluated as arithmetic.
func (w *walker) markInt(name string) {
	if w.ints == nil {
		w.ints = make(map[string]bool)
	}
	if len(w.ints) < 64 {
		w.ints[name] = true
	}
}
