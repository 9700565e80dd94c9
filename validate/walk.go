package validate

import (
	"sort"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Limits that keep a check bounded. Input beyond them is refused with
// [RuleTooComplex].
const (
	maxInput     = 4 << 20 // bytes of shell text
	maxDepth     = 12      // nested payloads: bash -c "bash -c '…'"
	maxWork      = 50000   // statements and commands visited
	maxCombos    = 16      // combinations of alternative variable values per command
	maxFindings  = 64
	maxAlts      = 8        // alternative values of one variable
	maxGlobNames = 16       // known commands a glob command word may stand for
	maxValue     = maxInput // bytes of one expanded word; longer values are unknown
	maxExpanded  = 64 << 20 // bytes that expansions may produce in one check
	maxEval      = 8        // nested static evaluations of $(…)
)

type finding struct {
	rule   string
	reason string
	action Action
}

// result is shared by a walker and its children.
type result struct {
	findings []finding
	work     int
	complex  bool
	fetched  map[string]string // downloaded file → the command that wrote it
	files    map[string]field  // file → content an earlier command wrote
	links    map[string]string // symbolic link → target, from ln -s
	eval     int               // nesting of static $(…) evaluations
	expanded int               // bytes produced by expansions
	taints   map[*syntax.Stmt]taint
	startup  map[string]*startupWrite // start-up file → the writes to it
}

// walker checks one shell program. Nested payloads get a child walker that
// shares the result.
type walker struct {
	cfg  *config
	opts Options
	res  *result
	cmds map[string]handler

	vars    map[string]*binding
	funcs   map[string]*funcInfo
	aliases map[string]rebind // alias NAME=VALUE defined earlier in the line
	hashed  map[string]rebind // hash -p PATH NAME
	ints    map[string]bool   // declare -i NAME: assignments to it are arithmetic
	cwd     string
	oldcwd  string   // for cd -
	dirs    []string // the pushd stack
	args    []field  // positional parameters $1…
	arg0    *field
	hasArgs bool

	depth int
	where string // " in the bash -c payload at 1:9"
	cond  int    // > 0 inside a branch or loop body
	sub   int    // > 0 inside a subshell
	spawn bool   // inside a pipeline or a background job
	fn    *funcInfo
	ch    *chooser
}

// rebind is a name rebound by alias or hash -p.
type rebind struct {
	to   string
	sure bool // defined outside branches, loops, functions, subshells and pipelines
}

// sure reports whether a definition made here certainly holds for the
// commands that follow.
func (w *walker) sure() bool {
	return w.cond == 0 && w.sub == 0 && !w.spawn && w.fn == nil
}

type funcInfo struct {
	uncond bool // defined outside any branch, loop or function: calls of its name run it
	name   string
	first  string          // the first name, the value of $FUNCNAME
	calls  map[string]bool // callee → some call runs in the background or a pipeline
	body   *syntax.Stmt
	active bool // being walked for a call: no recursion
}

// invocation is one simple command about to run.
type invocation struct {
	argv  []field
	stdin *source
	env   map[string]*binding // NAME=value prefixes
	net   bool                // a redirection connects it to a network socket
	dyn   bool                // some command word on the way here was dynamic
	rec   bool                // find -exec: targets stand for everything below them too
	via   []string
}

func (inv *invocation) sub(argv []field, via string) *invocation {
	n := *inv
	n.argv = argv
	if via != "" {
		n.via = append(inv.via[:len(inv.via):len(inv.via)], via)
	}
	return &n
}

// source is what a command reads as its program or its input.
type source struct {
	text    field // the content, when has is set (may hold unknown parts)
	has     bool
	taint   taint
	items   []field // for xargs: paths a find prints
	findRec bool    // items stand for everything below them
	desc    string
}

func newWalker(cfg *config, opts Options, res *result) *walker {
	w := &walker{cfg: cfg, opts: opts, res: res, cmds: commandTable}
	if strings.HasPrefix(opts.Dir, "/") {
		w.cwd = cleanPath(opts.Dir)
	}
	return w
}

func (w *walker) child(label string, pos syntax.Pos, positional []field, env map[string]*binding) *walker {
	c := &walker{cfg: w.cfg, opts: w.opts, res: w.res, cmds: w.cmds, cwd: w.cwd, oldcwd: w.oldcwd, depth: w.depth + 1}
	if len(w.vars)+len(env) > 0 {
		c.vars = make(map[string]*binding, len(w.vars)+len(env))
		for k, v := range w.vars {
			c.vars[k] = v
		}
		for k, v := range env {
			c.vars[k] = v
		}
	}
	c.where = " in the " + label + at(pos) + w.where
	if positional != nil {
		c.hasArgs = true
		if len(positional) > 0 {
			a0 := positional[0]
			c.arg0 = &a0
			c.args = positional[1:]
		}
	}
	return c
}

func at(pos syntax.Pos) string {
	if !pos.IsValid() || pos.Line() == 0 {
		return ""
	}
	return " at " + strconv.Itoa(int(pos.Line())) + ":" + strconv.Itoa(int(pos.Col()))
}

// report records a finding.
func (w *walker) report(inv *invocation, rule, msg string) {
	if inv != nil && inv.dyn && (rule == RuleSudo || rule == RuleNotAllowlisted) {
		return
	}
	a := w.cfg.action(rule)
	if a == Off || len(w.res.findings) >= maxFindings {
		return
	}
	if inv != nil && len(inv.via) > 0 {
		msg += " (run through " + strings.Join(inv.via, ", ") + ")"
	}
	w.res.findings = append(w.res.findings, finding{rule: rule, reason: msg + w.where, action: a})
}

// complex records that the input is beyond the checker's limits and stops
// the walk.
func (w *walker) complex(msg string) {
	if w.res.complex {
		return
	}
	w.res.complex = true
	w.res.work = maxWork + 1
	w.report(nil, RuleTooComplex, msg)
}

// charge counts the parsing of n bytes of payload against the work limit.
func (w *walker) charge(n int) bool {
	w.res.work += n / 64
	return w.tick()
}

func (w *walker) tick() bool {
	w.res.work++
	if w.res.work > maxWork {
		w.complex("the command needs more than " + strconv.Itoa(maxWork) + " checking steps")
		return false
	}
	return true
}

// setVar binds a variable. Inside a branch or loop the new value joins the
// old ones as an alternative.
func (w *walker) setVar(name string, v value) {
	if len(v.f.s) > maxValue || len(v.arr) > 1024 {
		v = value{f: unknownField(0)}
	}
	if w.vars == nil {
		w.vars = make(map[string]*binding)
	}
	old := w.vars[name]
	if w.cond > 0 && old != nil && len(old.alts) < maxAlts {
		alts := make([]value, 0, len(old.alts)+1)
		alts = append(alts, old.alts...)
		w.vars[name] = &binding{alts: append(alts, v)}
		return
	}
	w.vars[name] = &binding{alts: []value{v}}
}

func (w *walker) setUnknown(name string) {
	w.setVar(name, value{f: unknownField(0)})
}

// stmts walks a statement list.
func (w *walker) stmts(list []*syntax.Stmt, in *source) {
	for _, s := range list {
		if w.res.complex {
			return
		}
		w.stmt(s, in)
	}
}

func (w *walker) stmt(s *syntax.Stmt, in *source) {
	if !w.tick() {
		return
	}
	spawn := w.spawn
	if s.Background || s.Coprocess || s.Disown {
		w.spawn = true
	}
	stdin, net := w.redirects(s, in)
	w.command(s.Cmd, stdin, net)
	w.recordOutput(s, in)
	w.spawn = spawn
}

// recordOutput remembers what a statement with known output writes to a
// file (echo / > list; cat > run.sh <<EOF), so that later commands reading
// the file are judged by its content.
func (w *walker) recordOutput(s *syntax.Stmt, in *source) {
	var target *syntax.Redirect
	for _, r := range s.Redirs {
		if (r.N == nil || r.N.Value == "1") && r.Word != nil &&
			(r.Op == syntax.RdrOut || r.Op == syntax.AppOut || r.Op == syntax.RdrClob || r.Op == syntax.RdrAll || r.Op == syntax.AppAll) {
			target = r
		}
	}
	if target == nil {
		return
	}
	fs := w.expandWords([]*syntax.Word{target.Word})
	if len(fs) != 1 || !fs[0].exact() {
		return
	}
	if _, ok := s.Cmd.(*syntax.CallExpr); ok {
		if out, ok := w.staticOutputOf(s, in); ok {
			w.recordFile(fs[0], out, target.Op == syntax.AppOut || target.Op == syntax.AppAll)
			return
		}
	}
	t := w.taintOf([]*syntax.Stmt{s})
	if in != nil {
		t |= in.taint
	}
	if t != 0 {
		w.recordFetch(fs[0], describeStmt(s)+at(s.Pos()))
	}
}

func (w *walker) recordFile(f, content field, appendTo bool) {
	if !f.exact() || f.s == "" {
		return
	}
	key := w.fileKey(f.s)
	w.noteStartupContent(f)
	if content.exact() {
		if what, ok := accountContent(key, content.s); ok {
			w.report(nil, RuleAccountTamper, "writing "+what+" to "+showPath(key))
		}
	}
	if w.res.files == nil {
		w.res.files = make(map[string]field)
	}
	if old, ok := w.res.files[key]; ok && appendTo {
		content = joinFields(old, content, "")
	}
	if len(w.res.files) < 64 {
		w.res.files[key] = content
	}
}

// forgetFile drops what is known of a file that a command writes with
// unknown content.
func (w *walker) forgetFile(f field) {
	if len(w.res.files) == 0 || !f.exact() {
		return
	}
	delete(w.res.files, w.fileKey(f.s))
}

func (w *walker) command(cmd syntax.Command, in *source, net bool) {
	switch c := cmd.(type) {
	case nil:
	case *syntax.CallExpr:
		w.call(c, in, net)
	case *syntax.BinaryCmd:
		switch c.Op {
		case syntax.Pipe, syntax.PipeAll:
			w.pipeline(c, in)
		default:
			w.stmt(c.X, in)
			w.cond++
			w.stmt(c.Y, in)
			w.cond--
		}
	case *syntax.Block:
		w.stmts(c.Stmts, in)
	case *syntax.Subshell:
		vars, cwd, oldcwd, dirs := w.vars, w.cwd, w.oldcwd, w.dirs
		w.vars = copyVars(w.vars)
		w.dirs = append([]string(nil), dirs...)
		w.sub++
		w.stmts(c.Stmts, in)
		w.sub--
		w.vars, w.cwd, w.oldcwd, w.dirs = vars, cwd, oldcwd, dirs
	case *syntax.IfClause:
		w.stmts(c.Cond, in)
		w.cond++
		w.stmts(c.Then, in)
		for e := c.Else; e != nil; e = e.Else {
			w.stmts(e.Cond, in)
			w.stmts(e.Then, in)
		}
		w.cond--
	case *syntax.WhileClause:
		w.cond++
		w.stmts(c.Cond, in)
		w.stmts(c.Do, in)
		w.cond--
	case *syntax.ForClause:
		w.forClause(c, in)
	case *syntax.CaseClause:
		w.scan(c.Word, nil)
		w.cond++
		for _, item := range c.Items {
			for _, p := range item.Patterns {
				w.scan(p, nil)
			}
			w.stmts(item.Stmts, in)
		}
		w.cond--
	case *syntax.FuncDecl:
		w.funcDecl(c)
	case *syntax.ArithmCmd:
		w.arithLeaves(c.X, "arithmetic command ((…))")
		w.scan(c.X, nil)
	case *syntax.TestClause:
		w.testExpr(c.X)
		w.scan(c.X, nil)
	case *syntax.DeclClause:
		w.declArgs(c)
		w.declClause(c)
	case *syntax.LetClause:
		for _, e := range c.Exprs {
			w.arithLeaves(e, "let expression")
			w.scan(e, nil)
		}
	case *syntax.TimeClause:
		if c.Stmt != nil {
			w.stmt(c.Stmt, in)
		}
	case *syntax.CoprocClause:
		spawn := w.spawn
		w.spawn = true
		w.stmt(c.Stmt, in)
		w.spawn = spawn
	case *syntax.TestDecl:
		w.scan(c.Description, nil)
		w.stmt(c.Body, in)
	}
}

func copyVars(m map[string]*binding) map[string]*binding {
	if m == nil {
		return nil
	}
	c := make(map[string]*binding, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

func (w *walker) forClause(c *syntax.ForClause, in *source) {
	w.cond++
	defer func() { w.cond-- }()
	switch l := c.Loop.(type) {
	case *syntax.WordIter:
		for _, it := range l.Items {
			w.scan(it, nil)
		}
		if l.InPos.IsValid() || len(l.Items) > 0 {
			items := w.expandWords(l.Items)
			bnd := &binding{}
			for _, it := range items {
				if len(bnd.alts) >= maxAlts {
					bnd.alts = append(bnd.alts, value{f: unknownField(0)})
					break
				}
				bnd.alts = append(bnd.alts, value{f: it})
			}
			if w.vars == nil {
				w.vars = make(map[string]*binding)
			}
			if len(bnd.alts) == 0 {
				bnd.alts = []value{{f: field{}}}
			}
			w.vars[l.Name.Value] = bnd
		} else if w.hasArgs {
			bnd := &binding{}
			for _, a := range w.args {
				bnd.alts = append(bnd.alts, value{f: a})
				if len(bnd.alts) >= maxAlts {
					break
				}
			}
			if len(bnd.alts) == 0 {
				bnd.alts = []value{{f: field{}}}
			}
			if w.vars == nil {
				w.vars = make(map[string]*binding)
			}
			w.vars[l.Name.Value] = bnd
		} else {
			w.setUnknown(l.Name.Value)
		}
	case *syntax.CStyleLoop:
		for _, x := range []syntax.ArithmExpr{l.Init, l.Cond, l.Post} {
			if x != nil {
				w.arithLeaves(x, "for ((…)) expression")
				w.scan(x, nil)
			}
		}
	}
	w.stmts(c.Do, in)
}

func (w *walker) funcDecl(c *syntax.FuncDecl) {
	var names []string
	if c.Name != nil {
		names = append(names, c.Name.Value)
	}
	for _, n := range c.Names {
		names = append(names, n.Value)
	}
	if w.funcs == nil {
		w.funcs = make(map[string]*funcInfo)
	}
	fn := &funcInfo{name: strings.Join(names, " "), calls: map[string]bool{}, body: c.Body}
	if len(names) > 0 {
		fn.first = names[0]
	}
	// bash reads f() { …; } | x as a pipeline, the parser as a body: the
	// definition is then not sure to hold.
	if c.Body != nil {
		_, piped := c.Body.Cmd.(*syntax.BinaryCmd)
		fn.uncond = w.sure() && !piped && !c.Body.Background && !c.Body.Coprocess
	}
	for _, n := range names {
		w.funcs[n] = fn
	}
	if c.Body == nil {
		return
	}
	prev, spawn := w.fn, w.spawn
	w.fn, w.spawn = fn, false
	w.cond++
	w.stmt(c.Body, nil)
	w.cond--
	w.fn, w.spawn = prev, spawn
}

func (w *walker) declClause(c *syntax.DeclClause) {
	for _, a := range c.Args {
		w.scanAssign(a)
	}
	for _, a := range c.Args {
		if a.Name != nil && !a.Naked {
			w.assign(a)
		}
	}
}

func (w *walker) scanAssign(a *syntax.Assign) {
	if a.Value != nil {
		w.scan(a.Value, nil)
	}
	if a.Index != nil {
		if a.Name != nil {
			w.arithLeaves(a.Index, "index of the assignment to "+a.Name.Value+"[…]")
		}
		w.scan(a.Index, nil)
	}
	if a.Array != nil {
		for _, e := range a.Array.Elems {
			if e.Index != nil {
				w.arithLeaves(e.Index, "index of an element of an array assignment")
				w.scan(e.Index, nil)
			}
			if e.Value != nil {
				w.scan(e.Value, nil)
			}
		}
	}
}

// assignValue resolves the value of an assignment.
func (w *walker) assignValue(a *syntax.Assign) (value, bool) {
	switch {
	case a.Index != nil:
		return value{}, false
	case a.Array != nil:
		var elems []field
		for _, e := range a.Array.Elems {
			if e.Value != nil {
				elems = w.expandWord(e.Value, elems)
			}
		}
		return value{arr: elems, isArr: true}, true
	case a.Value == nil:
		return value{f: field{}}, true
	}
	f := w.expandString(a.Value)
	if a.Append {
		old, ok := w.lookupScalar(a.Name.Value)
		if !ok {
			return value{}, false
		}
		f = joinFields(old, f, "")
	}
	return value{f: f}, true
}

func (w *walker) assign(a *syntax.Assign) {
	if a.Name == nil {
		return
	}
	w.promptVar(a)
	if w.ints[a.Name.Value] && a.Value != nil && a.Index == nil {
		// declare -i: the value is evaluated as arithmetic when assigned,
		// and the variable then holds a number.
		w.declValue(w.expandString(a.Value), "integer variable "+a.Name.Value, false, true, false)
		w.setVar(a.Name.Value, value{f: unknownField(unkNumber | unkNonEmpty | unkNoFlag)})
		return
	}
	if a.Index != nil {
		w.assignElem(a)
		return
	}
	// A value built from variables with several possible values has
	// several possible values too.
	prev := w.ch
	w.ch = &chooser{}
	var alts []value
	for i := 0; i < maxCombos; i++ {
		v, ok := w.assignValue(a)
		if !ok {
			alts = nil
			break
		}
		if len(alts) < maxAlts {
			alts = append(alts, v)
		}
		if !w.ch.next() {
			break
		}
	}
	w.ch = prev
	switch {
	case len(alts) == 0:
		w.setUnknown(a.Name.Value)
	case len(alts) == 1:
		w.setVar(a.Name.Value, alts[0])
	default:
		if w.vars == nil {
			w.vars = make(map[string]*binding)
		}
		w.vars[a.Name.Value] = &binding{alts: alts}
	}
}

// assignElem handles a[i]=value for a literal index.
func (w *walker) assignElem(a *syntax.Assign) {
	name := a.Name.Value
	n, err := strconv.Atoi(arithLit(a.Index))
	if err != nil || n < 0 || n > 64 || a.Value == nil {
		w.setUnknown(name)
		return
	}
	var arr []field
	if v, ok := w.lookup(name); ok {
		if v.isArr {
			arr = append(arr, v.arr...)
		} else {
			arr = append(arr, v.f)
		}
	}
	for len(arr) <= n {
		arr = append(arr, field{})
	}
	f := w.expandString(a.Value)
	if a.Append {
		f = joinFields(arr[n], f, "")
	}
	arr[n] = f
	w.setVar(name, value{arr: arr, isArr: true})
}

// scan walks the command and process substitutions inside a node that is
// not a statement: they run when the shell expands the node.
func (w *walker) scan(node syntax.Node, out *source) {
	if node == nil {
		return
	}
	syntax.Walk(node, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst:
			spawn := w.spawn
			w.spawn = false
			w.stmts(n.Stmts, nil)
			w.spawn = spawn
			return false
		case *syntax.ArithmExp:
			w.arithLeaves(n.X, "arithmetic expansion $((…))")
		case *syntax.ParamExp:
			w.paramCode(n)
		case *syntax.ProcSubst:
			var in *source
			if n.Op == syntax.CmdOut {
				// >(cmd) reads what the outer command writes.
				in = out
				if in == nil {
					in = &source{desc: "the output of the outer command"}
				}
			}
			w.stmts(n.Stmts, in)
			return false
		}
		return true
	})
}

func (w *walker) call(ce *syntax.CallExpr, in *source, net bool) {
	var out *source
	for _, wd := range ce.Args {
		if needsOut(wd) {
			out = &source{taint: w.taintOfWords(ce.Args), desc: "the output of the outer command"}
			if in != nil {
				out.taint |= in.taint
			}
			break
		}
	}
	for _, a := range ce.Assigns {
		w.scanAssign(a)
	}
	for _, wd := range ce.Args {
		w.scan(wd, out)
	}
	if len(ce.Args) == 0 {
		for _, a := range ce.Assigns {
			w.assign(a)
		}
		return
	}
	var env map[string]*binding
	for _, a := range ce.Assigns {
		if a.Name == nil {
			continue
		}
		if env == nil {
			env = make(map[string]*binding, len(ce.Assigns))
		}
		if v, ok := w.assignValue(a); ok {
			env[a.Name.Value] = &binding{alts: []value{v}}
		} else {
			env[a.Name.Value] = &binding{alts: []value{{f: unknownField(0)}}}
		}
	}
	prev := w.ch
	w.ch = &chooser{}
	for i := 0; i < maxCombos && !w.res.complex; i++ {
		argv := w.expandWords(ce.Args)
		w.invoke(&invocation{argv: argv, stdin: in, env: env, net: net})
		if !w.ch.next() {
			break
		}
	}
	w.ch = prev
}

func needsOut(wd *syntax.Word) bool {
	for _, p := range wd.Parts {
		if ps, ok := p.(*syntax.ProcSubst); ok && ps.Op == syntax.CmdOut {
			return true
		}
	}
	return false
}

// pipeline walks the stages of a pipeline, each reading the output of the
// one before.
func (w *walker) pipeline(c *syntax.BinaryCmd, in *source) {
	var stages []*syntax.Stmt
	var flat func(s *syntax.Stmt)
	flat = func(s *syntax.Stmt) {
		if b, ok := s.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) && len(s.Redirs) == 0 && !s.Negated && !s.Background {
			flat(b.X)
			flat(b.Y)
			return
		}
		stages = append(stages, s)
	}
	flat(c.X)
	flat(c.Y)
	spawn := w.spawn
	w.spawn = true
	src := in
	for _, st := range stages {
		w.stmt(st, src)
		if w.res.complex {
			break
		}
		src = w.producer(st, src)
	}
	w.spawn = spawn
}

// producer describes the output of a statement.
func (w *walker) producer(st *syntax.Stmt, in *source) *source {
	out := &source{desc: "the output of " + describeStmt(st) + at(st.Pos())}
	out.taint = w.taintOf([]*syntax.Stmt{st})
	if in != nil {
		out.taint |= in.taint
	}
	if f, ok := w.staticOutput(st, in); ok {
		out.text, out.has = f, true
	}
	if items, rec, ok := w.findOutput(st); ok {
		out.items, out.findRec = items, rec
	}
	return out
}

// describeStmt names the command of a statement for a reason.
func describeStmt(st *syntax.Stmt) string {
	if ce, ok := st.Cmd.(*syntax.CallExpr); ok && len(ce.Args) > 0 {
		if s, ok := quickLit(ce.Args[0]); ok {
			return s
		}
		return "a command"
	}
	return "a compound command"
}

// redirects checks the redirections of a statement and returns its standard
// input.
func (w *walker) redirects(s *syntax.Stmt, in *source) (*source, bool) {
	net := false
	for _, r := range s.Redirs {
		fd0 := r.N == nil || r.N.Value == "0"
		if r.Hdoc != nil {
			quoted := quotedDelim(r.Word)
			if !quoted {
				w.scan(r.Hdoc, nil)
			}
			if fd0 && (r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc) {
				f := w.hdocText(r.Hdoc, quoted)
				in = &source{text: f, has: true, taint: f.taint, desc: "the here-document" + at(r.OpPos)}
			}
			continue
		}
		if r.Word == nil {
			continue
		}
		w.scan(r.Word, nil)
		if r.Op == syntax.WordHdoc {
			if fd0 {
				f := w.expandString(r.Word)
				f = joinFields(f, exactField(""), "\n")
				in = &source{text: f, has: true, taint: f.taint, desc: "the here-string" + at(r.OpPos)}
			}
			continue
		}
		prev := w.ch
		w.ch = &chooser{}
		var fields []field
		for i := 0; i < maxCombos; i++ {
			fields = append(fields, w.expandWords([]*syntax.Word{r.Word})...)
			if !w.ch.next() {
				break
			}
		}
		w.ch = prev
		for _, f := range fields {
			if f.exact() && (strings.HasPrefix(f.s, "/dev/tcp/") || strings.HasPrefix(f.s, "/dev/udp/")) {
				net = true
				if fd0 && (r.Op == syntax.RdrIn || r.Op == syntax.RdrInOut) {
					in = &source{taint: taintNet, desc: f.s}
				}
				continue
			}
			how := "the redirection " + r.Op.String() + " " + f.show()
			switch r.Op {
			case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob,
				syntax.RdrAll, syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob:
				w.writeTarget(nil, f, how)
				if r.Op != syntax.AppOut && r.Op != syntax.AppAll && r.Op != syntax.AppAllClob && r.Op != syntax.AppClob {
					w.forgetFile(f)
				}
			case syntax.RdrInOut:
				w.writeTarget(nil, f, how)
				if fd0 {
					in = w.fileSource(f)
				}
			case syntax.RdrIn:
				w.readTarget(nil, f, how)
				if fd0 {
					in = w.fileSource(f)
				}
			case syntax.DplOut:
				if !isFD(f) {
					w.writeTarget(nil, f, how)
				}
			case syntax.DplIn:
				if !isFD(f) {
					w.readTarget(nil, f, how)
				}
			}
		}
	}
	return in, net
}

func isFD(f field) bool {
	if !f.exact() {
		return false
	}
	s := strings.TrimSuffix(f.s, "-")
	return s == "" || isDigits(s)
}

func quotedDelim(wd *syntax.Word) bool {
	if wd == nil {
		return false
	}
	for _, p := range wd.Parts {
		switch p := p.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			return true
		case *syntax.Lit:
			if strings.IndexByte(p.Value, '\\') >= 0 {
				return true
			}
		}
	}
	return false
}

// hdocText resolves the body of a here-document.
func (w *walker) hdocText(body *syntax.Word, quoted bool) field {
	b := builder{pos: body.Pos(), noSplit: true, w: w}
	for _, p := range body.Parts {
		if l, ok := p.(*syntax.Lit); ok {
			if quoted {
				b.addQuoted(l.Value)
			} else {
				b.addQuoted(unescapeHeredoc(l.Value))
			}
			continue
		}
		w.addParts(&b, []syntax.WordPart{p}, true, false)
	}
	return b.single()
}

// fileSource is the content of a file read as input.
func (w *walker) fileSource(f field) *source {
	if f.proc != nil {
		return w.procSource(f.proc)
	}
	src := &source{desc: "the file " + f.show()}
	if c, ok := w.knownFile(f); ok {
		src.text, src.has, src.taint = c, true, c.taint
		src.desc += " written earlier"
	}
	if by, ok := w.fetchedFile(f); ok {
		src.taint |= taintFetch
		src.desc += " downloaded by " + by
	}
	return src
}

// procSource is the output of a process substitution <(…).
func (w *walker) procSource(ps *syntax.ProcSubst) *source {
	src := &source{desc: "the process substitution" + at(ps.Pos()), taint: w.taintOf(ps.Stmts)}
	if len(ps.Stmts) == 1 {
		if f, ok := w.staticOutput(ps.Stmts[0], nil); ok {
			src.text, src.has = f, true
		}
	}
	return src
}

// finish runs the checks that need the whole program: fork bombs.
func (w *walker) finish() {
	if len(w.funcs) == 0 {
		return
	}
	names := make([]string, 0, len(w.funcs))
	for n := range w.funcs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if w.forkBomb(n) {
			w.report(nil, RuleForkBomb, "function "+strconv.Quote(n)+" calls itself in a background job or pipeline, so processes multiply until the machine stalls")
			return
		}
	}
}

// forkBomb reports whether function name can reach itself through calls,
// one of which spawns a process.
func (w *walker) forkBomb(name string) bool {
	type state struct {
		fn    string
		spawn bool
	}
	seen := map[state]bool{}
	var visit func(fn string, spawned bool) bool
	visit = func(fn string, spawned bool) bool {
		fi := w.funcs[fn]
		if fi == nil {
			return false
		}
		callees := make([]string, 0, len(fi.calls))
		for c := range fi.calls {
			callees = append(callees, c)
		}
		sort.Strings(callees)
		for _, callee := range callees {
			sp := spawned || fi.calls[callee]
			if callee == name && sp {
				return true
			}
			st := state{callee, sp}
			if seen[st] {
				continue
			}
			seen[st] = true
			if visit(callee, sp) {
				return true
			}
		}
		return false
	}
	return visit(name, false)
}

// quickLit returns the value of a word made of literal and quoted text only.
func quickLit(wd *syntax.Word) (string, bool) {
	if len(wd.Parts) == 1 {
		if l, ok := wd.Parts[0].(*syntax.Lit); ok && strings.IndexByte(l.Value, '\\') < 0 {
			return l.Value, true
		}
	}
	var b strings.Builder
	for _, p := range wd.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			v := p.Value
			for i := 0; i < len(v); i++ {
				if v[i] == '\\' && i+1 < len(v) {
					i++
				}
				b.WriteByte(v[i])
			}
		case *syntax.SglQuoted:
			if p.Dollar {
				b.WriteString(ansiC(p.Value))
			} else {
				b.WriteString(p.Value)
			}
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(unescapeDouble(l.Value))
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// taintOf reports whether statements download or decode data: curl, wget,
// nc, base64 -d, reads of /dev/tcp, … anywhere inside them.
func (w *walker) taintOf(stmts []*syntax.Stmt) taint {
	var t taint
	for _, st := range stmts {
		if c, ok := w.res.taints[st]; ok {
			t |= c
			continue
		}
		var st1 taint
		syntax.Walk(st, func(n syntax.Node) bool {
			switch n := n.(type) {
			case *syntax.CallExpr:
				st1 |= taintOfArgs(n.Args)
			case *syntax.Redirect:
				if n.Word != nil {
					if s, ok := quickLit(n.Word); ok && (strings.HasPrefix(s, "/dev/tcp/") || strings.HasPrefix(s, "/dev/udp/")) {
						st1 |= taintNet
					}
				}
			}
			return true
		})
		if w.res.taints == nil {
			w.res.taints = make(map[*syntax.Stmt]taint)
		}
		if len(w.res.taints) < 1024 {
			w.res.taints[st] = st1
		}
		t |= st1
	}
	return t
}

func (w *walker) taintOfWords(words []*syntax.Word) taint {
	return taintOfArgs(words)
}

func taintOfArgs(args []*syntax.Word) taint {
	var t taint
	var lits []string
	for _, a := range args {
		s, ok := quickLit(a)
		if !ok {
			continue
		}
		lits = append(lits, s)
	}
	for i, s := range lits {
		base := strings.ToLower(s[strings.LastIndexByte(s, '/')+1:])
		if fetchers[base] {
			t |= taintFetch
		}
		if decoders[base] && decodes(base, lits[i+1:]) {
			t |= taintDecode
		}
	}
	return t
}

// fetchers download data.
var fetchers = map[string]bool{
	"curl": true, "wget": true, "wget2": true, "fetch": true, "aria2c": true, "http": true,
	"https": true, "xh": true, "xhs": true, "lwp-request": true, "get": true, "lynx": true,
	"links": true, "w3m": true, "nc": true, "ncat": true, "netcat": true, "socat": true,
	"telnet": true, "ftp": true, "tftp": true, "ssh": true, "scp": true, "sftp": true,
	"curlie": true, "httpie": true, "axel": true, "s3cmd": true, "gsutil": true, "rclone": true,
	"websocat": true,
}

// decoders turn an encoded payload back into text.
var decoders = map[string]bool{
	"base64": true, "base32": true, "basenc": true, "xxd": true, "uudecode": true,
	"gpg": true, "openssl": true, "b64decode": true, "rev": true,
}

func decodes(name string, args []string) bool {
	switch name {
	case "uudecode", "b64decode", "rev":
		return true
	case "xxd":
		for _, a := range args {
			if a == "-revert" || a == "--revert" || strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsRune(a, 'r') {
				return true
			}
		}
		return false
	case "gpg":
		for _, a := range args {
			if a == "-d" || a == "--decrypt" {
				return true
			}
		}
		return false
	}
	for _, a := range args {
		if a == "--decode" || a == "-D" || a == "-d" || a == "-base64" && name == "openssl" ||
			strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && len(a) <= 4 && strings.ContainsRune(a, 'd') {
			return true
		}
	}
	return false
}
