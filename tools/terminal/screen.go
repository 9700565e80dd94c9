package terminal

import "unicode/utf8"

// Screen applies what a terminal does with carriage returns and
// backspaces, so the model reads what a person would see: "\r\n" is a
// newline; after a lone "\r" the next text replaces the line (a progress
// bar shows its last state); a backspace removes the character before it
// on the line. Everything else passes through (textsafe.Clean then
// removes escape sequences).
func Screen(b []byte) []byte {
	out := make([]byte, 0, len(b))
	line := 0 // where the current line starts in out
	cr := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; c {
		case '\r':
			if i+1 < len(b) && b[i+1] == '\n' {
				continue
			}
			cr = true
		case '\n':
			out = append(out, c)
			line, cr = len(out), false
		case '\b':
			if len(out) > line {
				_, n := utf8.DecodeLastRune(out[line:])
				out = out[:len(out)-n]
			}
		default:
			if cr {
				out, cr = out[:line], false
			}
			out = append(out, c)
		}
	}
	return out
}
