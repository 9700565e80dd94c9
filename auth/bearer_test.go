package auth_test

import (
	"strings"
	"testing"

	"github.com/rigout/rigout/auth"
)

// bearerTests are Authorization header values and the token parseBearer
// must find in them ("" for a refusal). They also seed FuzzBearer.
var bearerTests = []struct {
	name string
	vals []string
	want string
}{
	{name: "canonical", vals: []string{"Bearer abc"}, want: "abc"},
	{name: "lower-case scheme", vals: []string{"bearer abc"}, want: "abc"},
	{name: "upper-case scheme", vals: []string{"BEARER abc"}, want: "abc"},
	{name: "mixed-case scheme", vals: []string{"bEaReR abc"}, want: "abc"},
	{name: "two spaces", vals: []string{"Bearer  abc"}, want: "abc"},
	{name: "tab", vals: []string{"Bearer\tabc"}, want: "abc"},
	{name: "spaces and tabs", vals: []string{"Bearer \t \tabc"}, want: "abc"},
	{name: "surrounding whitespace", vals: []string{" \tBearer abc\t "}, want: "abc"},
	{name: "token68 characters", vals: []string{"Bearer aZ09-._~+/=="}, want: "aZ09-._~+/=="},
	{name: "longest token", vals: []string{"Bearer " + strings.Repeat("a", 1024)}, want: strings.Repeat("a", 1024)},

	{name: "no header", vals: nil},
	{name: "empty", vals: []string{""}},
	{name: "two headers", vals: []string{"Bearer abc", "Bearer abc"}},
	{name: "scheme only", vals: []string{"Bearer"}},
	{name: "scheme and space", vals: []string{"Bearer "}},
	{name: "scheme and whitespace", vals: []string{"Bearer \t  "}},
	{name: "no separator", vals: []string{"Bearerabc"}},
	{name: "other scheme", vals: []string{"Basic abc"}},
	{name: "scheme prefix", vals: []string{"Bear abc"}},
	{name: "longer scheme", vals: []string{"Bearers abc"}},
	{name: "non-ASCII in scheme", vals: []string{"Beärer abc"}},
	{name: "newline separator", vals: []string{"Bearer\nabc"}},
	{name: "second token", vals: []string{"Bearer abc def"}},
	{name: "list", vals: []string{"Bearer abc,def"}},
	{name: "auth-param", vals: []string{"Bearer realm=\"x\""}},
	{name: "inner '='", vals: []string{"Bearer a=b"}},
	{name: "only padding", vals: []string{"Bearer =="}},
	{name: "NUL", vals: []string{"Bearer ab\x00c"}},
	{name: "non-ASCII token", vals: []string{"Bearer tökén"}},
	{name: "token too long", vals: []string{"Bearer " + strings.Repeat("a", 1025)}},
}

func TestParseBearer(t *testing.T) {
	for _, tt := range bearerTests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := auth.ParseBearer(tt.vals)
			if got != tt.want || ok != (tt.want != "") {
				t.Errorf("ParseBearer(%q) = %q, %v; want %q, %v", tt.vals, got, ok, tt.want, tt.want != "")
			}
		})
	}
}
