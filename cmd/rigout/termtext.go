package main

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// termText makes text that came from the ledger, a log or a client safe to
// print on a terminal: C0 controls (tab and newline included), DEL, C1
// controls, Unicode bidirectional overrides and invalid UTF-8 bytes are
// shown as Go-style escapes (\x1b, \u202e), so a tool name cannot clear the
// screen, fake a line or set the window title. A backslash is doubled only
// where it would make an escape ambiguous: before an escape's letter.
func termText(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\' && i+1 < len(s) && (s[i+1] == 'x' || s[i+1] == 'u'):
			b.WriteString(`\\`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// termLine is termText for one line of a multi-line text: the same, but a
// tab is kept.
func termLine(s string) string {
	if !strings.Contains(s, "\t") {
		return termText(s)
	}
	parts := strings.Split(s, "\t")
	for i, p := range parts {
		parts[i] = termText(p)
	}
	return strings.Join(parts, "\t")
}

func needsEscape(s string) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || r < 0x20 || r == 0x7f || unsafeRune(r) ||
			(r == '\\' && i+1 < len(s) && (s[i+1] == 'x' || s[i+1] == 'u')) {
			return true
		}
		i += size
	}
	return false
}

// unsafeRune reports C1 controls and the bidirectional formatting
// characters that reorder what a terminal shows.
func unsafeRune(r rune) bool {
	return (r >= 0x80 && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) ||
		r == 0x200e || r == 0x200f || r == 0x061c
}
