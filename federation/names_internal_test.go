package federation

import (
	"regexp"
	"strings"
	"testing"
)

// TestNameRuleMatchesCountedPattern checks a downstream name's rule (a
// pattern and a length bound) against the counted pattern it replaces.
func TestNameRuleMatchesCountedPattern(t *testing.T) {
	counted := regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,23}$`)
	for _, n := range []int{0, 1, 23, 24, 25, 40} {
		for _, s := range []string{strings.Repeat("a", n), "-" + strings.Repeat("a", n), strings.Repeat("a", n) + "A"} {
			want := counted.MatchString(s)
			err := (&Server{Name: s}).check()
			if got := err == nil || !strings.Contains(err.Error(), "downstream name"); got != want {
				t.Errorf("name of %d bytes %.10q: accepted = %v (%v), counted pattern says %v", len(s), s, got, err, want)
			}
		}
	}
}

// TestDefaultPathArgs: the default names are paths, in their _path forms
// too; other names and host arguments are not; of the default names only
// string, list-of-string or untyped arguments are taken.
func TestDefaultPathArgs(t *testing.T) {
	for _, c := range []struct {
		name string
		want bool
	}{
		{"path", true}, {"paths", true}, {"file", true}, {"filename", true}, {"directory", true},
		{"dir", true}, {"cwd", true}, {"source", true}, {"destination", true},
		{"file_path", true}, {"source_path", true}, {"output_paths", true},
		{"target", false}, {"msg", false}, {"pathology", false}, {"_path", false}, {"host", false},
	} {
		if got := DefaultPathArgs(c.name); got != c.want {
			t.Errorf("DefaultPathArgs(%q) = %v, want %v", c.name, got, c.want)
		}
	}
	for _, c := range []struct {
		schema string
		want   bool
	}{
		{`{"type":"string"}`, true},
		{`{}`, true},
		{`{"description":"a file"}`, true},
		{`{"type":["string","null"]}`, true},
		{`{"type":"array","items":{"type":"string"}}`, true},
		{`{"type":"array"}`, true},
		{`{"type":"number"}`, false},
		{`{"type":"object"}`, false},
		{`{"type":"array","items":{"type":"object"}}`, false},
		{`not json`, false},
	} {
		if got := stringish([]byte(c.schema)); got != c.want {
			t.Errorf("stringish(%s) = %v, want %v", c.schema, got, c.want)
		}
	}
}
