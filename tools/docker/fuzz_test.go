package docker_test

import (
	"strings"
	"testing"

	"github.com/rigout/rigout/tools/docker"
)

// FuzzNames: a container or image name that passes cannot be read as an
// option and holds no whitespace or shell syntax.
func FuzzNames(f *testing.F) {
	for _, s := range []string{"web", "--privileged", "-v /:/host", "$(id)", "alpine:3", "a;b", "registry:5000/x@sha256:ab"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		bad := strings.HasPrefix(name, "-") || strings.ContainsAny(name, " \t\n\r\x00;&|`$()'\"\\<>*?")
		if bad && (docker.ValidContainer(name) || docker.ValidImage(name)) {
			t.Errorf("accepted %q", name)
		}
	})
}
