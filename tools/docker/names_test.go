package docker_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/rigout/rigout/tools/docker"
)

// TestNameRulesMatchCountedPatterns checks ValidContainer and ValidImage
// against the counted patterns they replace (the bound checked apart),
// at and around the length limits and on near-misses.
func TestNameRulesMatchCountedPatterns(t *testing.T) {
	container := regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,127}$`)
	image := regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._/:@-]{0,254}$`)
	var names []string
	for _, n := range []int{0, 1, 2, 127, 128, 129, 254, 255, 256, 400} {
		names = append(names, strings.Repeat("a", n), "-"+strings.Repeat("a", n), "a"+strings.Repeat("/b", n/2), strings.Repeat("a", n)+" ")
	}
	names = append(names, "web_1", "a..b", "reg:5000/x@sha256:00", "_x", ".x", "a\nb", "é")
	for _, s := range names {
		if got, want := docker.ValidContainer(s), container.MatchString(s); got != want {
			t.Errorf("ValidContainer(%d bytes %.20q) = %v, counted pattern says %v", len(s), s, got, want)
		}
		want := image.MatchString(s) && !strings.Contains(s, "//") && !strings.Contains(s, "..")
		if got := docker.ValidImage(s); got != want {
			t.Errorf("ValidImage(%d bytes %.20q) = %v, counted pattern says %v", len(s), s, got, want)
		}
	}
}
