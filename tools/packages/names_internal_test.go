package packages

import (
	"regexp"
	"strings"
	"testing"
)

// TestCheckImagesMatchesCountedPattern checks checkImages against the
// counted pattern it replaces, at and around the length limit.
func TestCheckImagesMatchesCountedPattern(t *testing.T) {
	counted := regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._/:@-]{0,254}$`)
	for _, n := range []int{1, 2, 254, 255, 256, 300} {
		for _, s := range []string{strings.Repeat("a", n), "-" + strings.Repeat("a", n-1), strings.Repeat("a", n-1) + " "} {
			want := counted.MatchString(s) && !strings.Contains(s, "..") && !strings.Contains(s, "//")
			if got := checkImages([]string{s}) == nil; got != want {
				t.Errorf("checkImages(%d bytes) ok = %v, counted pattern says %v", len(s), got, want)
			}
		}
	}
}
