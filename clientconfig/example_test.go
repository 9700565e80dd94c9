package clientconfig_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/rigout/rigout/clientconfig"
)

// A program tells Cursor how to start it over stdio, and merges the entry
// into Cursor's file beside the servers already there.
func Example() {
	ep := clientconfig.Endpoint{Command: "/usr/local/bin/mygateway", Args: []string{"stdio"}}
	e, err := clientconfig.NewEntry(clientconfig.Cursor, "mygateway", ep)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(e.Snippet)

	home, err := os.MkdirTemp("", "home")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(home)
	path, _ := clientconfig.File(clientconfig.Cursor, home, "linux", nil)
	os.MkdirAll(filepath.Dir(path), 0o700)
	os.WriteFile(path, []byte(`{"mcpServers": {"other": {"command": "other"}}}`), 0o600)
	backup, replaced, err := clientconfig.Merge(path, e)
	if err != nil {
		fmt.Println(err)
		return
	}
	merged, _ := os.ReadFile(path)
	fmt.Printf("backup kept: %t, replaced: %t\n%s", backup != "", replaced, merged)
	// Output:
	// {
	//   "mcpServers": {
	//     "mygateway": {
	//       "args": [
	//         "stdio"
	//       ],
	//       "command": "/usr/local/bin/mygateway"
	//     }
	//   }
	// }
	// backup kept: true, replaced: false
	// {
	//   "mcpServers": {
	//     "mygateway": {
	//       "args": [
	//         "stdio"
	//       ],
	//       "command": "/usr/local/bin/mygateway"
	//     },
	//     "other": {
	//       "command": "other"
	//     }
	//   }
	// }
}
