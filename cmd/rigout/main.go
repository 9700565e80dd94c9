// Command rigout is the reference gateway: it serves rigout's tools over
// stdio or streamable HTTP.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "rigout: work in progress")
	os.Exit(2)
}
