package validate

import (
	"fmt"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Check decides whether shell text (bash dialect) may run. It parses the
// text, walks every command it contains, including substitutions,
// functions, here-documents and the payloads of sh -c and eval, and applies
// the rules of the policy.
//
// Check never modifies p and is safe for concurrent use.
func (p *Policy) Check(cmd string, opts Options) (d Decision) {
	cfg := p.compile()
	res := &result{}
	defer func() {
		if r := recover(); r != nil {
			d = refuse(RuleTooComplex, fmt.Sprintf("the checker failed on this input (%v)", r), false)
		}
	}()
	if i := strings.IndexByte(cmd, 0); i >= 0 {
		return refuse(RuleParseError, "the command holds a NUL byte at offset "+strconv.Itoa(i), cfg.action(RuleParseError) == Confirm)
	}
	if opts.Stdin != nil && strings.IndexByte(*opts.Stdin, 0) >= 0 {
		// A NUL ends what a shell reads; judged as text, the rest is hidden.
		return refuse(RuleParseError, "the stdin argument holds a NUL byte", cfg.action(RuleParseError) == Confirm)
	}
	if len(cmd)+stdinLen(opts) > maxInput {
		return refuse(RuleTooComplex, "the command is longer than "+strconv.Itoa(maxInput)+" bytes", cfg.action(RuleTooComplex) == Confirm)
	}
	if opts.Dialect == DialectCmd || opts.Dialect == DialectPowerShell {
		return checkWindows(cfg, cmd, opts.Dialect, opts)
	}
	if opts.Dialect != DialectPOSIX {
		return refuse(RuleParseError, "unknown shell dialect "+opts.Dialect.String(), false)
	}
	file, err := parse(cmd)
	if err != nil {
		return refuse(RuleParseError, "the shell parser rejects the command: "+err.Error(), cfg.action(RuleParseError) == Confirm)
	}
	w := newWalker(cfg, opts, res)
	w.stmts(file.Stmts, stdinSource(opts))
	w.finish()
	w.judgeStartup()
	d = res.decision()
	d.ReadOnly = d.Allowed && readOnlyFile(file, opts.Dir)
	if d.Allowed {
		if argv, ok := simpleArgv(file); ok {
			d.argv = strings.Join(argv, "\x00")
		}
	}
	return d
}

// CheckArgv decides whether a program may run with exactly these arguments,
// without a shell: nothing in argv is expanded ("*" is a file named "*"),
// but wrappers and shells are still seen through, so ["rm", "-rf", "/"] and
// ["bash", "-c", "rm -rf /"] are both refused.
//
// CheckArgv never modifies p and is safe for concurrent use.
func (p *Policy) CheckArgv(argv []string, opts Options) (d Decision) {
	cfg := p.compile()
	res := &result{}
	defer func() {
		if r := recover(); r != nil {
			d = refuse(RuleTooComplex, fmt.Sprintf("the checker failed on this input (%v)", r), false)
		}
	}()
	if len(argv) == 0 || argv[0] == "" {
		return refuse(RuleParseError, "the argument vector has no program name", cfg.action(RuleParseError) == Confirm)
	}
	size := 0
	fields := make([]field, len(argv))
	for i, a := range argv {
		if j := strings.IndexByte(a, 0); j >= 0 {
			return refuse(RuleParseError, "argument "+strconv.Itoa(i)+" holds a NUL byte at offset "+strconv.Itoa(j), cfg.action(RuleParseError) == Confirm)
		}
		size += len(a)
		fields[i] = field{s: a}
	}
	if opts.Stdin != nil && strings.IndexByte(*opts.Stdin, 0) >= 0 {
		return refuse(RuleParseError, "the stdin argument holds a NUL byte", cfg.action(RuleParseError) == Confirm)
	}
	if size+stdinLen(opts) > maxInput {
		return refuse(RuleTooComplex, "the arguments are longer than "+strconv.Itoa(maxInput)+" bytes", cfg.action(RuleTooComplex) == Confirm)
	}
	if opts.Dialect == DialectCmd || opts.Dialect == DialectPowerShell {
		return checkWindowsArgv(cfg, argv, opts.Dialect, opts)
	}
	if opts.Dialect != DialectPOSIX {
		return refuse(RuleParseError, "unknown shell dialect "+opts.Dialect.String(), false)
	}
	w := newWalker(cfg, opts, res)
	w.where = " in argv"
	w.invoke(&invocation{argv: fields, stdin: stdinSource(opts)})
	w.finish()
	w.judgeStartup()
	d = res.decision()
	d.ReadOnly = d.Allowed && !inDev(opts.Dir) && observesArgv(argv)
	return d
}

// stdinSource is the caller's stdin argument as the source the command
// reads: the code of a program that reads its program from stdin.
func stdinSource(opts Options) *source {
	if opts.Stdin == nil {
		return nil
	}
	return &source{text: exactField(*opts.Stdin), has: true, desc: "the stdin argument"}
}

func stdinLen(opts Options) int {
	if opts.Stdin == nil {
		return 0
	}
	return len(*opts.Stdin)
}

func parse(src string) (*syntax.File, error) {
	return syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
}

func refuse(rule, reason string, confirm bool) Decision {
	return Decision{Rule: rule, Reason: reason, Hint: ruleTable[ruleIndex(rule)].Hint, Confirm: confirm}
}

// decision picks the finding of highest priority: a refusal before a
// request for confirmation, then the rule order of the rule table.
func (r *result) decision() Decision {
	best := bestFinding(len(r.findings), func(i int) finding { return r.findings[i] })
	if best < 0 {
		return Decision{Allowed: true}
	}
	f := r.findings[best]
	return refuse(f.rule, f.reason, f.action == Confirm)
}

// bestFinding returns the index of the finding of highest priority among
// n, at(i) giving each: a refusal before a request for confirmation, then
// the rule order of the rule table; -1 when n is 0.
func bestFinding(n int, at func(int) finding) int {
	best, bestRank := -1, 0
	for i := range n {
		f := at(i)
		rank := ruleIndex(f.rule)
		if f.action == Confirm {
			rank += len(ruleTable)
		}
		if best < 0 || rank < bestRank {
			best, bestRank = i, rank
		}
	}
	return best
}

func itoa(n int) string { return strconv.Itoa(n) }

func atoi(s string) (int, error) { return strconv.Atoi(s) }
