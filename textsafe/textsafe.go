// Package textsafe renders text a tool is about to show — command output,
// file contents, a command line — so that every transport carries it and
// every reader can read it: escape sequences and control characters out
// ([Clean]), secrets masked by package redact ([Text], [Block]), long text
// cut with a count of what was left out ([Block], [FirstLine]).
package textsafe

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/rigout/rigout/redact"
)

// Text renders bytes a tool is about to show — command output, file
// contents — for every transport and every reader: cleaned (see
// [Clean]), then with secrets masked (package redact).
func Text(b []byte) string { return redact.String(Clean(b)) }

// Block renders caller-supplied text that may span lines (a command
// line, a script) for a result, the ledger or a question to a person: whole
// when it is short, else its first max bytes and the count of lines and
// bytes left out, cleaned and redacted. A multi-line command is never shown
// by its first line alone.
func Block(s string, max int) string {
	s = strings.TrimRight(s, "\n")
	if len(s) <= max {
		return Text([]byte(s))
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return Text([]byte(s[:cut])) + fmt.Sprintf("… [%d of %d bytes not shown; %d lines in all]",
		len(s)-cut, len(s), strings.Count(s, "\n")+1)
}

// Clean makes command output safe for every transport and readable by a
// model: ANSI escape sequences (CSI, OSC and two-byte escapes) are removed,
// CRLF and lone CR become LF, other C0 controls and DEL become U+FFFD, and
// invalid UTF-8 becomes U+FFFD. Tabs and newlines are kept.
func Clean(b []byte) string {
	if isPlain(b) {
		return string(b)
	}
	var sb strings.Builder
	sb.Grow(len(b))
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == 0x1b:
			i = skipEscape(b, i)
			continue
		case c == '\r':
			sb.WriteByte('\n')
			i++
			if i < len(b) && b[i] == '\n' {
				i++
			}
			continue
		case c == '\n' || c == '\t':
			sb.WriteByte(c)
		case c < 0x20 || c == 0x7f:
			sb.WriteRune(utf8.RuneError)
		case c < utf8.RuneSelf:
			sb.WriteByte(c)
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size <= 1 {
				sb.WriteRune(utf8.RuneError)
				i++
				continue
			}
			// C1 controls (U+0080–U+009F) can act as escapes in terminals.
			if r >= 0x80 && r <= 0x9f {
				sb.WriteRune(utf8.RuneError)
			} else {
				sb.Write(b[i : i+size])
			}
			i += size
			continue
		}
		i++
	}
	return sb.String()
}

// isPlain reports whether b is printable ASCII, tabs and newlines only, so
// that Clean can return it unchanged.
func isPlain(b []byte) bool {
	for _, c := range b {
		if (c < 0x20 && c != '\n' && c != '\t') || c >= 0x7f {
			return false
		}
	}
	return true
}

// skipEscape returns the index just past the escape sequence starting at
// b[i] == ESC.
func skipEscape(b []byte, i int) int {
	i++ // ESC
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '[': // CSI: parameters and intermediates, then a final byte 0x40–0x7e.
		i++
		for i < len(b) && (b[i] < 0x40 || b[i] > 0x7e) {
			i++
		}
		return min(i+1, len(b))
	case ']', 'P', '^', '_', 'X': // OSC, DCS, PM, APC: up to BEL or ST (ESC \).
		i++
		for i < len(b) {
			if b[i] == 0x07 {
				return i + 1
			}
			if b[i] == 0x1b && i+1 < len(b) && b[i+1] == '\\' {
				return i + 2
			}
			i++
		}
		return i
	default: // Two-byte escape, possibly with intermediates (ESC ( B).
		for i < len(b) && b[i] >= 0x20 && b[i] <= 0x2f {
			i++
		}
		return min(i+1, len(b))
	}
}

// FirstLine returns s up to its first newline, cut to at most n bytes on a
// rune boundary.
func FirstLine(s string, n int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
