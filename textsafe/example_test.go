package textsafe_test

import (
	"fmt"

	"github.com/rigout/rigout/textsafe"
)

// Output a tool shows loses its terminal escapes and control characters;
// a long command line is cut with a count of what was left out.
func Example() {
	fmt.Printf("%+q\n", textsafe.Text([]byte("\x1b[31mred\x1b[0m\r\nbell\x07")))
	fmt.Println(textsafe.Block("echo one\necho two\necho three", 12))
	fmt.Println(textsafe.FirstLine("first line\nsecond", 5))
	// Output:
	// "red\nbell\ufffd"
	// echo one
	// ech… [16 of 28 bytes not shown; 3 lines in all]
	// first…
}
