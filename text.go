package rigout

import "github.com/rigout/rigout/textsafe"

// SafeBlock is textsafe.Block.
//
// Deprecated: use textsafe.Block; SafeBlock stays while cmd/rigout uses it.
func SafeBlock(s string, max int) string { return textsafe.Block(s, max) }

// FirstLine is textsafe.FirstLine.
//
// Deprecated: use textsafe.FirstLine; FirstLine stays while cmd/rigout
// uses it.
func FirstLine(s string, n int) string { return textsafe.FirstLine(s, n) }
