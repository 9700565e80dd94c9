//go:build !linux

package exec

import "errors"

// ExecSealedHelper needs Linux's sealed memfds: elsewhere it returns an
// error and the caller serves from the verified file, saying so.
func ExecSealedHelper(sum string, argv []string, exeFD int) error {
	return errors.New("exec: sealed helper: needs Linux")
}

// VerifySealedHelper fails outside Linux (see ExecSealedHelper).
func VerifySealedHelper(sum string) error { return ErrHelperSealMismatch }
