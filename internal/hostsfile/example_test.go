package hostsfile_test

import (
	"fmt"

	"github.com/rigout/rigout/config"
	"github.com/rigout/rigout/exec/remote"
	"github.com/rigout/rigout/internal/hostsfile"
)

// The configuration file's hosts come first; a saved host named like one
// of them is left out, and said.
func ExampleMerge() {
	configured := hostsfile.FromConfig([]config.Host{{Name: "web1", Address: "10.0.0.5", Shell: "cmd"}})
	saved := []remote.HostConfig{{Name: "web1", Address: "10.9.9.9"}, {Name: "db1", Address: "10.0.0.7"}}
	all, skipped := hostsfile.Merge(configured, saved)
	for _, h := range all {
		fmt.Printf("%s %s shell=%q\n", h.Name, h.Address, h.Shell)
	}
	fmt.Println("skipped:", skipped)
	// Output:
	// web1 10.0.0.5 shell="cmd"
	// db1 10.0.0.7 shell=""
	// skipped: [web1]
}
