package exec

import (
	"errors"
	"io/fs"
	"syscall"
	"testing"
)

// TestReplyErrSaysThePathOnce: a view's or helper's reply whose message is
// package os's "op path: errno" becomes a *fs.PathError that says the path
// once and still matches fs.ErrNotExist; a message of its own stays whole.
func TestReplyErrSaysThePathOnce(t *testing.T) {
	err := replyErr("open", "/srv/a b/x", fileReply{Err: "open srv/a b/x: no such file or directory", Errno: int(syscall.ENOENT)})
	if got, want := err.Error(), "open /srv/a b/x: no such file or directory"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%v is not fs.ErrNotExist", err)
	}
	own := "exec: /srv is outside the principal's roots"
	err = replyErr("open", "/srv/x", fileReply{Err: own, Errno: int(syscall.EACCES)})
	if got, want := err.Error(), "open /srv/x: "+own; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(err, fs.ErrPermission) {
		t.Errorf("%v is not fs.ErrPermission", err)
	}
}
