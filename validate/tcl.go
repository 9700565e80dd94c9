package validate

import (
	"strings"
)

// scanTcl looks for the plain cases in Tcl code (tclsh, wish, expect):
// file delete [-force] PATH, file rename, file copy, exec and spawn of a
// program with literal arguments, open "|cmd" and open PATH w, expect's
// system. Command substitutions [ … ] and braced bodies are searched too.
func scanTcl(code string, depth int) inlineFind {
	var out inlineFind
	if depth > 4 {
		return out
	}
	for _, cmd := range tclCommands(code) {
		words := tclWords(cmd)
		for _, wd := range words {
			// Command substitutions and bodies: scan them as code too.
			if strings.HasPrefix(wd, "[") || strings.HasPrefix(wd, "{") || strings.Contains(wd, "[") {
				inner := scanTcl(strings.Trim(wd, "[]{}"), depth+1)
				out.merge(inner)
			}
		}
		if len(words) == 0 {
			continue
		}
		lit := make([]string, len(words))
		for i, wd := range words {
			lit[i] = strings.Trim(wd, "{}\"")
		}
		switch lit[0] {
		case "file":
			if len(lit) < 3 {
				continue
			}
			args := lit[2:]
			force := false
			for len(args) > 0 && strings.HasPrefix(args[0], "-") {
				force = force || args[0] == "-force"
				args = args[1:]
			}
			switch lit[1] {
			case "delete":
				if force {
					out.deletes = append(out.deletes, args...)
				} else {
					out.removes = append(out.removes, args...)
				}
			case "rename":
				if len(args) >= 2 {
					out.moves = append(out.moves, args[:len(args)-1]...)
					out.writes = append(out.writes, args[len(args)-1])
				}
			case "copy":
				if len(args) >= 2 {
					out.writes = append(out.writes, args[len(args)-1])
				}
			}
		case "exec", "spawn":
			args := lit[1:]
			for len(args) > 0 && strings.HasPrefix(args[0], "-") {
				if args[0] == "--" {
					args = args[1:]
					break
				}
				args = args[1:]
			}
			out.argv = append(out.argv, tclPipeline(args)...)
		case "system":
			out.shell = append(out.shell, strings.Join(lit[1:], " "))
		case "open":
			if len(lit) < 2 {
				continue
			}
			if rest, ok := strings.CutPrefix(lit[1], "|"); ok {
				out.argv = append(out.argv, tclPipeline(tclWords(rest))...)
				continue
			}
			if len(lit) > 2 && strings.ContainsAny(lit[2], "wa+") || len(lit) > 2 && strings.Contains(lit[2], "WRONLY") || len(lit) > 2 && strings.Contains(lit[2], "RDWR") {
				out.writes = append(out.writes, lit[1])
			}
		case "eval", "uplevel", "catch", "if", "while", "for", "foreach", "proc", "after", "time":
			// Bodies are scanned above.
		}
		if lit[0] == "while" && len(lit) > 2 && (lit[1] == "1" || lit[1] == "true") && strings.Contains(cmd, "fork") {
			out.bomb = true
		}
	}
	return out
}

func (f *inlineFind) merge(o inlineFind) {
	f.shell = append(f.shell, o.shell...)
	f.argv = append(f.argv, o.argv...)
	f.deletes = append(f.deletes, o.deletes...)
	f.removes = append(f.removes, o.removes...)
	f.writes = append(f.writes, o.writes...)
	f.moves = append(f.moves, o.moves...)
	f.bomb = f.bomb || o.bomb
}

// tclPipeline splits exec's words at | and drops redirections.
func tclPipeline(words []string) [][]string {
	var out [][]string
	var cur []string
	for _, wd := range words {
		wd = strings.Trim(wd, "{}\"")
		switch {
		case wd == "|" || wd == "|&":
			if len(cur) > 0 {
				out = append(out, cur)
			}
			cur = nil
		case wd == "&" || strings.HasPrefix(wd, ">") || strings.HasPrefix(wd, "<") || strings.HasPrefix(wd, "2>"):
		case strings.HasPrefix(wd, "$") || strings.HasPrefix(wd, "["):
			cur = append(cur, "") // unknown at run time
		default:
			cur = append(cur, wd)
		}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// tclCommands splits Tcl code into commands at newlines and semicolons
// outside braces, brackets and quotes.
func tclCommands(code string) []string {
	var out []string
	depth, start := 0, 0
	quoted := false
	for i := 0; i < len(code); i++ {
		switch c := code[i]; {
		case c == '\\':
			i++
		case c == '"' && depth == 0:
			quoted = !quoted
		case (c == '{' || c == '[') && !quoted:
			depth++
		case (c == '}' || c == ']') && !quoted && depth > 0:
			depth--
		case (c == '\n' || c == ';') && depth == 0 && !quoted:
			out = append(out, code[start:i])
			start = i + 1
		}
	}
	out = append(out, code[start:])
	cmds := out[:0]
	for _, c := range out {
		c = strings.TrimSpace(c)
		if c != "" && c[0] != '#' {
			cmds = append(cmds, c)
		}
	}
	return cmds
}

// tclWords splits a command into words, keeping braced, bracketed and
// quoted words whole.
func tclWords(cmd string) []string {
	var out []string
	i := 0
	for i < len(cmd) {
		for i < len(cmd) && (cmd[i] == ' ' || cmd[i] == '\t') {
			i++
		}
		if i >= len(cmd) {
			break
		}
		start := i
		depth := 0
		quoted := false
		for i < len(cmd) {
			c := cmd[i]
			if c == '\\' {
				i += 2
				continue
			}
			if c == '"' && depth == 0 {
				quoted = !quoted
			} else if (c == '{' || c == '[') && !quoted {
				depth++
			} else if (c == '}' || c == ']') && !quoted && depth > 0 {
				depth--
			} else if (c == ' ' || c == '\t') && depth == 0 && !quoted {
				break
			}
			i++
		}
		out = append(out, cmd[start:min(i, len(cmd))])
	}
	return out
}
