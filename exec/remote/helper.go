package remote

import (
	"context"
	"errors"
	"fmt"

	"github.com/rigout/rigout/exec"
)

// HelperMode says whether a host's commands and file operations go through
// the rigout helper (see HelperConfig).
type HelperMode string

// The helper modes.
const (
	// HelperAuto (also the zero value) uses the helper where it can run and
	// otherwise falls back to plain SSH and SFTP, saying so in each
	// Result's Route and Unsandboxed.
	HelperAuto HelperMode = "auto"
	// HelperRequire refuses a host's commands and file operations when the
	// helper cannot run there.
	HelperRequire HelperMode = "require"
	// HelperOff never uses the helper for the host (plain SSH and SFTP,
	// today's behaviour; the far side then runs no sandbox).
	HelperOff HelperMode = "off"
)

// Validate reports whether m is a known mode.
func (m HelperMode) Validate() error {
	switch m {
	case "", HelperAuto, HelperRequire, HelperOff:
		return nil
	}
	return fmt.Errorf("exec: helper mode %q: want auto, require or off", string(m))
}

// HelperConfig ships rigout's helper to SSH hosts (RouterConfig.Helper):
// on first use of a Linux host, the helper for its architecture is
// uploaded over SFTP into a per-user cache directory, verified by its
// SHA-256 after upload and before every start, and then runs the host's
// commands (in a per-principal view of the host, where its kernel allows)
// and file operations (openat2 with RESOLVE_BENEATH: nothing leads out of
// the root, however links are swapped). See docs/SSH_HELPER.md.
type HelperConfig struct {
	// Binaries holds the helper program per platform, keyed "linux/amd64",
	// "linux/arm64" and so on (GOOS/GOARCH). A host whose platform has no
	// entry falls back (or is refused under HelperRequire). With no
	// entries at all, no helper is shipped: HelperAuto hosts are reached by
	// plain SSH and SFTP, Describe saying so with Origin, and HelperRequire
	// hosts are refused. FindHelperBinaries reads a release's.
	Binaries map[string][]byte `json:"-"`
	// Origin says where Binaries came from ("linux/amd64 beside
	// /usr/local/bin/rigout", "ssh.helper.binaries") or, when it is empty,
	// where none was found. Describe reports it; it changes nothing else.
	Origin string
	// CacheDir is where the helper is kept on a host, relative to the
	// login's home directory. If empty, ".cache/rigout". It is made 0700;
	// the helper file is 0500 and named helper-<sha256>.
	CacheDir string
	// Hidden lists further paths on the host that commands through the
	// helper cannot read, relative to the login's home unless absolute.
	// The helper always hides ~/.ssh, ~/.gnupg, its own cache directory,
	// the agent socket ($SSH_AUTH_SOCK) and $XDG_RUNTIME_DIR.
	Hidden []string
	// Principal returns the principal a command runs for, from the call's
	// context, as ViewConfig.Principal. If nil, the principal is the one
	// the SSH runner was resolved for, with no roots scope.
	Principal func(ctx context.Context) exec.Principal `json:"-"`
}

// HelperError reports that a host's helper could not be used: not Linux,
// no binary for its platform, an upload or start that failed, a hash that
// did not match after a fresh upload.
type HelperError struct {
	// Host is the host asked for.
	Host string
	// Reason says why, in words.
	Reason string
	// Err is the underlying error, if any.
	Err error
}

func (e *HelperError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("exec: rigout helper on %s: %s: %v", e.Host, e.Reason, e.Err)
	}
	return fmt.Sprintf("exec: rigout helper on %s: %s", e.Host, e.Reason)
}

// Unwrap returns Err.
func (e *HelperError) Unwrap() error { return e.Err }

// ErrHelperRequired means a host whose mode is HelperRequire cannot run the
// helper; the *HelperError wrapping it says why.
var ErrHelperRequired = errors.New("exec: rigout helper required on this host")
