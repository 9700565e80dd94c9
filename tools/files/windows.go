package files

import (
	"context"
	"path"
	"strings"

	"github.com/rigout/rigout/exec"
)

// windowsHost reports whether host is an SSH host whose shell is cmd.exe
// or PowerShell (configured or detected, see exec.ShellDetector): its paths
// are Windows paths, and the policy judges its file actions with the
// Windows rules. A host whose shell cannot be learned now counts as not.
// With known, it never contacts the host (path resolvers run before the
// chain checks the token's hosts) and only a configured or earlier
// detected shell counts.
func (f *Family) windowsHost(ctx context.Context, host, principal string, known bool) bool {
	if f.cfg.Router == nil {
		return false
	}
	t, err := f.cfg.Router.Resolve(ctx, host, principal)
	if err != nil || t.Local {
		return false
	}
	s, ok := t.Runner.(exec.ShellDetector)
	if !ok {
		return false
	}
	if known {
		sh, ok := s.KnownShell()
		return ok && sh.Windows()
	}
	sh, err := s.Shell(ctx)
	return err == nil && sh.Windows()
}

// sftpWindowsPath is a Windows path in the form Windows OpenSSH's SFTP
// server takes: C:\Users\a, C:/Users/a and /C:/Users/a are /C:/Users/a;
// a drive alone is its root (/C:/); . and .. are resolved, never above
// the drive. A path without a drive keeps its slashes turned to /.
func sftpWindowsPath(p string) string {
	p = strings.ReplaceAll(p, `\`, "/")
	if len(p) >= 2 && p[1] == ':' && isDriveLetter(p[0]) {
		p = "/" + p
	}
	if len(p) >= 3 && p[0] == '/' && p[2] == ':' && isDriveLetter(p[1]) {
		drive := strings.ToUpper(p[1:3])
		return "/" + drive + path.Clean("/"+p[3:])
	}
	return path.Clean(p)
}

// windowsNative is an SFTP path of a Windows host as its shell reads it:
// /C:/Users/a is C:\Users\a.
func windowsNative(p string) string {
	if len(p) >= 3 && p[0] == '/' && p[2] == ':' && isDriveLetter(p[1]) {
		p = p[1:]
	}
	return strings.ReplaceAll(p, "/", `\`)
}

func isDriveLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// windowsArgv is the cmd.exe command equivalent to a file action's POSIX
// command (what judge is given), for the Windows policy: rm -r is
// rmdir /s, rm and a write or copy over a file are del (so that critical
// files are refused), mv is move, a recursive chmod is icacls /t and a
// recursive chown takeown /r. Paths are turned to Windows paths. Actions
// the Windows policy has no rule for map to dir, which it allows.
func windowsArgv(argv []string) []string {
	var flags, paths []string
	dashes := false
	for _, a := range argv[1:] {
		switch {
		case dashes:
			paths = append(paths, windowsNative(a))
		case a == "--":
			dashes = true
		default:
			flags = append(flags, a)
		}
	}
	has := func(f string) bool {
		for _, x := range flags {
			if x == f {
				return true
			}
		}
		return false
	}
	last := func() string {
		if len(paths) == 0 {
			return ""
		}
		return paths[len(paths)-1]
	}
	switch argv[0] {
	case "rm":
		if has("-r") {
			return append([]string{"rmdir", "/s", "/q"}, paths...)
		}
		return append([]string{"del"}, paths...)
	case "tee", "cp":
		return []string{"del", last()}
	case "mv":
		return append([]string{"move"}, paths...)
	case "chmod":
		if has("-R") {
			return []string{"icacls", last(), "/t"}
		}
	case "chown":
		if has("-R") {
			return []string{"takeown", "/f", last(), "/r"}
		}
	}
	return []string{"dir", last()}
}
