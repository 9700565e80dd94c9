package docker_test

import (
	"fmt"

	"github.com/rigout/rigout/tools/docker"
)

// Argv is what docker_operations runs after the engine's name: the
// caller's values never sit where an option could be read, and names
// that look like options are refused.
func ExampleArgv() {
	argv, _ := docker.Argv(docker.Args{Operation: "run", Image: "alpine:3.20", Command: []string{"echo", "hi"}}, ".")
	fmt.Println(argv)
	_, err := docker.Argv(docker.Args{Operation: "stop", ContainerName: "--privileged"}, ".")
	fmt.Println(err)
	// Output:
	// [run --rm -- alpine:3.20 echo hi]
	// container_name "--privileged" is not a container name (letters, digits, _ . -; not starting with - or .)
}
