package packages_test

import (
	"fmt"

	"github.com/rigout/rigout/tools/packages"
)

// InstallArgv validates the names for their manager and returns the argv
// install_software runs.
func ExampleInstallArgv() {
	for _, m := range packages.Managers {
		if m.Name != "apt" && m.Name != "pip" {
			continue
		}
		argv, err := packages.InstallArgv(m, []string{"curl"}, nil)
		fmt.Println(argv, err)
		_, err = packages.InstallArgv(m, []string{"--index-url=http://evil"}, nil)
		fmt.Println(err != nil)
	}
	// Output:
	// [env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends curl] <nil>
	// true
	// [python3 -m pip install --disable-pip-version-check --no-input -- curl] <nil>
	// true
}
