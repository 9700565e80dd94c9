package terminal

import (
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"

	"github.com/rigout/rigout/sessions"
)

// A terminal session's shell remembers what earlier commands defined:
// aliases, functions, traps, PROMPT_COMMAND and the prompts, hash -p,
// shopt and set options, variables. A command judged alone could run one of
// them unseen (alias ll='rm -rf' in one call, ll / in the next). The family
// keeps, per session, the definitions its allowed commands made, and judges
// each new command after them, as the policy judges one line that defines
// then uses a name. The working directory is tracked by the session itself
// (Info.Cwd).

// maxDefs bounds the definitions kept for one session; a command that would
// add beyond it is refused, so that nothing defined goes unjudged.
const maxDefs = 64 << 10

// maxTracked bounds the sessions tracked before those that ended are
// dropped.
const maxTracked = 256

// definitions holds what each session's earlier commands defined.
type definitions struct {
	// mu protects byID.
	mu   sync.Mutex
	byID map[string]string // principal NUL session ID → shell text
}

func defsKey(principal, id string) string { return principal + "\x00" + id }

// get returns the definitions of a session.
func (d *definitions) get(principal, id string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.byID[defsKey(principal, id)]
}

// add appends the definitions a command made; it reports false when the
// session holds too many to judge.
func (d *definitions) add(m *sessions.Manager, principal, id, defs string) bool {
	if defs == "" {
		return true
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	k := defsKey(principal, id)
	if len(d.byID[k])+len(defs) > maxDefs {
		return false
	}
	if d.byID == nil {
		d.byID = make(map[string]string)
	}
	if _, ok := d.byID[k]; !ok && len(d.byID) >= maxTracked {
		for key := range d.byID {
			p, sid, _ := strings.Cut(key, "\x00")
			if _, err := m.Terminal(p, sid); err != nil {
				delete(d.byID, key)
			}
		}
	}
	d.byID[k] += defs + "\n"
	return true
}

// fits reports whether defs can be added to a session's definitions.
func (d *definitions) fits(principal, id, defs string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.byID[defsKey(principal, id)])+len(defs) <= maxDefs
}

// forget drops a closed session's definitions.
func (d *definitions) forget(principal, id string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.byID, defsKey(principal, id))
}

// stateBuiltins change what later commands of the shell run.
var stateBuiltins = map[string]bool{
	"alias": true, "unalias": true, "trap": true, "hash": true, "shopt": true, "set": true,
	"enable": true, "export": true, "unset": true, "source": true, ".": true, "eval": true,
	"bind": true, "complete": true, "builtin": true,
}

// definitionsOf returns the statements of a command line that define
// state for later commands: function definitions, assignments, and the
// builtins above, at the top level or inside a list or block. Parse
// errors give nothing: such a line was refused.
func definitionsOf(line string) string {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil {
		return ""
	}
	var keep []*syntax.Stmt
	var visit func(list []*syntax.Stmt)
	visit = func(list []*syntax.Stmt) {
		for _, s := range list {
			switch c := s.Cmd.(type) {
			case *syntax.FuncDecl, *syntax.DeclClause:
				keep = append(keep, s)
			case *syntax.CallExpr:
				if len(c.Args) == 0 && len(c.Assigns) > 0 {
					keep = append(keep, s)
				} else if len(c.Args) > 0 && stateBuiltins[c.Args[0].Lit()] {
					keep = append(keep, s)
				}
			case *syntax.BinaryCmd:
				if c.Op == syntax.AndStmt || c.Op == syntax.OrStmt {
					visit([]*syntax.Stmt{c.X, c.Y})
				}
			case *syntax.Block:
				visit(c.Stmts)
			}
		}
	}
	visit(f.Stmts)
	if len(keep) == 0 {
		return ""
	}
	var sb strings.Builder
	p := syntax.NewPrinter()
	for _, s := range keep {
		s.Background, s.Coprocess = false, false
		if err := p.Print(&sb, s); err != nil {
			return ""
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}
