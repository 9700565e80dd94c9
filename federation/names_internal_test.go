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
