package textsafe

import "testing"

func TestClean(t *testing.T) {
	tests := map[string]string{
		"plain\ttext\n":                 "plain\ttext\n",
		"crlf\r\nline":                  "crlf\nline",
		"bare\rcr":                      "bare\ncr",
		"\x1b[31mred\x1b[0m":            "red",
		"\x1b[?25l\x1b[2Jcleared":       "cleared",
		"\x1b]0;title\x07after":         "after",
		"\x1b]8;;http://x\x1b\\link":    "link",
		"\x1b(Bcharset":                 "charset",
		"bell\x07nul\x00del\x7f":        "bell\ufffdnul\ufffddel\ufffd",
		"bad utf8 \xff\xfe end":         "bad utf8 \ufffd\ufffd end",
		"c1 \u009b31m":                  "c1 \ufffd31m",
		"ünïcödé ✓ 日本":                  "ünïcödé ✓ 日本",
		"trailing escape \x1b":          "trailing escape ",
		"unterminated osc \x1b]0;never": "unterminated osc ",
	}
	for in, want := range tests {
		if got := Clean([]byte(in)); got != want {
			t.Errorf("Clean(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFirstLine(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"one\ntwo", 10, "one"},
		{"short", 10, "short"},
		{"abcdef", 3, "abc…"},
		{"ééé", 3, "é…"},
	}
	for _, tt := range tests {
		if got := FirstLine(tt.in, tt.n); got != tt.want {
			t.Errorf("FirstLine(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func TestBlock(t *testing.T) {
	tests := []struct {
		name, in string
		max      int
		want     string
	}{
		{"short", "echo hi", 500, "echo hi"},
		{"multi-line whole", "cd /tmp\nrm -rf x\n", 500, "cd /tmp\nrm -rf x"},
		{"redacted", "curl -H 'Authorization: Bearer abc123' x", 500, "curl -H 'Authorization: Bearer ***' x"},
		{"bounded with counts", "aaaa\nbbbb\ncccc", 6, "aaaa\nb… [8 of 14 bytes not shown; 3 lines in all]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Block(tt.in, tt.max); got != tt.want {
				t.Errorf("Block(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
			}
		})
	}
}
