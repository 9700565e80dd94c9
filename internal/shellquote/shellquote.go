// Package shellquote quotes words for a POSIX shell in the commands rigout
// prints for people to copy: a fix the doctor suggests, a client's
// `claude mcp add` line, a `--state-dir` to repeat. A word that needs no
// quoting stays bare, so the common command reads as typed.
//
// It is for display. A command rigout runs on a remote shell is quoted
// by exec.QuotePOSIX, which also writes control characters as bash's
// $'…'.
package shellquote

import "strings"

// Quote returns s quoted for a POSIX shell: bare when it holds only
// letters, digits and / . - _ : @ = + , (and is not empty), else in
// single quotes, where a single quote in s closes the quoting, stands
// escaped and reopens it.
func Quote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool { return !bare(r) }) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Join quotes each word with Quote and joins them with spaces.
func Join(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = Quote(w)
	}
	return strings.Join(q, " ")
}

// bare reports whether r needs no quoting in any POSIX shell.
func bare(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return true
	}
	return strings.ContainsRune("/.-_:@=+,", r)
}
