package validate

import "testing"

func TestUnescape(t *testing.T) {
	tests := []struct {
		in, double, heredoc string
	}{
		{`plain`, `plain`, `plain`},
		{`\$HOME`, `$HOME`, `$HOME`},
		{"a\\`b", "a`b", "a`b"},
		{`a\\b`, `a\b`, `a\b`},
		{`say \"hi\"`, `say "hi"`, `say \"hi\"`},
		{"line\\\nnext", "linenext", "linenext"},
		{`\n stays`, `\n stays`, `\n stays`},
		{`trailing\`, `trailing\`, `trailing\`},
	}
	for _, tt := range tests {
		if got := unescapeDouble(tt.in); got != tt.double {
			t.Errorf("unescapeDouble(%q) = %q, want %q", tt.in, got, tt.double)
		}
		if got := unescapeHeredoc(tt.in); got != tt.heredoc {
			t.Errorf("unescapeHeredoc(%q) = %q, want %q", tt.in, got, tt.heredoc)
		}
	}
}
