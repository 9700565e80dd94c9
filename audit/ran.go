package audit

import (
	"encoding/json"
	"strings"
)

// Ran returns what the row's call ran or touched, from the argument
// values the row keeps (Args; the gateway's Tool.Recorded names them): the shell command
// line, or the argv joined by spaces (an argument holding a space or a
// quote is quoted), or the action and path of a file tool; a process's
// command as its start row records it. It returns "" when the row keeps
// none. The text is as redacted as the row.
func (e Event) Ran() string {
	if e.Args == "" {
		return ""
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(e.Args), &m); err != nil {
		return e.Args // a plain command line (process.start)
	}
	if s, ok := m["command"].(string); ok && s != "" {
		return s
	}
	if argv, ok := m["argv"].([]any); ok && len(argv) > 0 {
		parts := make([]string, 0, len(argv))
		for _, a := range argv {
			s, _ := a.(string)
			if s == "" || strings.ContainsAny(s, " \t\n'\"\\$`") {
				s = "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
			}
			parts = append(parts, s)
		}
		return strings.Join(parts, " ")
	}
	var words []string
	for _, k := range []string{"action", "path", "source", "destination", "id"} {
		if s, ok := m[k].(string); ok && s != "" {
			words = append(words, s)
		}
	}
	return strings.Join(words, " ")
}
