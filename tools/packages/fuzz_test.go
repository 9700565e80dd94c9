package packages_test

import (
	"strings"
	"testing"

	"github.com/rigout/rigout/tools/packages"
)

// FuzzNames: whatever a caller sends, a name that passes for any manager
// cannot be read as an option and holds no whitespace or shell syntax.
func FuzzNames(f *testing.F) {
	for _, s := range []string{"curl", "-y", "--index-url=x", "a b", "$(id)", "pkg==1.0", "@scope/p@1", "a;b", "uvicorn[standard]>=0.30"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		for _, m := range packages.Managers {
			argv, err := packages.InstallArgv(m, []string{name}, nil)
			if err != nil {
				continue
			}
			if argv[len(argv)-1] != name || strings.HasPrefix(name, "-") || strings.ContainsAny(name, " \t\n\r\x00;&|`$()'\"\\") {
				t.Errorf("%s accepted %q", m.Name, name)
			}
		}
	})
}
