package files

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/credentials"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/exec/remote"
	"github.com/rigout/rigout/gate"
	"github.com/rigout/rigout/tools/internal/family"
	"github.com/rigout/rigout/validate"
)

// Defaults used when the corresponding Config field is zero.
const (
	// DefaultMaxReadBytes is 64 KiB: a read a model takes in at once
	// (clients spill or cut results past ~25k tokens); longer files are
	// paged by line with offset.
	DefaultMaxReadBytes     = 64 << 10
	DefaultReadLines        = 2000
	DefaultMaxEditBytes     = 16 << 20
	DefaultSearchTimeout    = 10 * time.Second
	DefaultMaxResults       = 200
	DefaultProgressInterval = 2 * time.Second
)

// Config configures the family. The zero value is valid: this machine
// only, the default command policy's protected roots and critical files.
type Config struct {
	// Router, if set, lets the tools reach SSH hosts over SFTP on its
	// pooled connections (see remote.Router.SFTP). The caller owns it.
	Router *remote.Router
	// Sandbox, if it has per-principal views (exec.ViewConfig), runs every
	// local file operation inside the calling principal's view, so that
	// the kernel judges a delete as it judges `rm` run by the same
	// principal. Without views, local operations run in the gateway and
	// only the policy and the roots guard them. The caller owns it.
	Sandbox *exec.Sandbox
	// Gate supplies the command policy whose protected roots and critical
	// files the mutating actions are judged by, exactly as the commands
	// that would do the same (rm -r, mv, chmod -R, tee). The policy is
	// applied in deny mode whatever its Mode: the file tools run no
	// program for an allow list to name. If nil, the default policy.
	Gate *gate.Gate
	// WorkDir is the base of relative local paths. If empty, the
	// process's working directory.
	WorkDir string
	// MaxReadBytes caps what one read returns. If zero,
	// DefaultMaxReadBytes (64 KiB).
	MaxReadBytes int
	// ReadLines is the default number of lines a read returns. If zero,
	// DefaultReadLines.
	ReadLines int
	// MaxEditBytes is the largest file edit rewrites. If zero,
	// DefaultMaxEditBytes (16 MiB).
	MaxEditBytes int64
	// SearchTimeout bounds one search. If zero, DefaultSearchTimeout.
	SearchTimeout time.Duration
	// MaxResults caps the results of one search or list. If zero,
	// DefaultMaxResults.
	MaxResults int
	// Hidden are directories (or files) of this machine the file tools
	// never reach, whatever the token: the gateway's state directory,
	// which holds its ledger and connection file. Their real paths are
	// compared with the real path of every name used.
	Hidden []string
	// ProgressInterval is how often a transfer reports progress to a
	// client that passed a progress token. If zero,
	// DefaultProgressInterval.
	ProgressInterval time.Duration
	// Credentials, if set, lets file_operations and search_files take
	// `secrets` ({"NAME": "alias"}): ${secret:NAME} in written content is
	// replaced by the value, and every result is masked of it. Each alias
	// must allow the tool and the host (credentials.Store.Allow). Without
	// a store the tools do not offer the argument.
	Credentials *credentials.Store
}

// Family is the files tool family. It is safe for concurrent use.
type Family struct {
	cfg     Config
	gate    *gate.Gate
	home    string
	written writtenFiles // files written with credentials templated in
}

// New builds the family from cfg, which is copied.
func New(cfg Config) (*Family, error) {
	c := cfg
	var p *validate.Policy
	if c.Gate != nil {
		p = c.Gate.Policy()
	} else {
		p = &validate.Policy{}
	}
	p.Mode = validate.ModeDeny
	g, err := gate.New(gate.Config{Policy: p})
	if err != nil {
		return nil, fmt.Errorf("files: %w", err)
	}
	if c.WorkDir, err = family.WorkDir("files", c.WorkDir); err != nil {
		return nil, err
	}
	if c.MaxReadBytes <= 0 {
		c.MaxReadBytes = DefaultMaxReadBytes
	}
	if c.ReadLines <= 0 {
		c.ReadLines = DefaultReadLines
	}
	if c.MaxEditBytes <= 0 {
		c.MaxEditBytes = DefaultMaxEditBytes
	}
	if c.SearchTimeout <= 0 {
		c.SearchTimeout = DefaultSearchTimeout
	}
	if c.MaxResults <= 0 {
		c.MaxResults = DefaultMaxResults
	}
	if c.ProgressInterval <= 0 {
		c.ProgressInterval = DefaultProgressInterval
	}
	hidden := make([]string, 0, len(c.Hidden))
	for _, h := range c.Hidden {
		if !filepath.IsAbs(h) {
			return nil, fmt.Errorf("files: Hidden path %q is not absolute", h)
		}
		hidden = append(hidden, realPath(filepath.ToSlash(filepath.Clean(h))))
	}
	c.Hidden = hidden
	home, _ := os.UserHomeDir()
	return &Family{cfg: c, gate: g, home: home}, nil
}

// Tools returns the family's tools, in the order tools/list shows them.
func (f *Family) Tools() []rigout.Tool {
	return []rigout.Tool{f.FileOperations(), f.SearchFiles(), f.BulkFileTransfer()}
}

// Instructions is the family's part of the initialize instructions.
func (f *Family) Instructions() string {
	return "For files use file_operations (read with line numbers, edit, write, …), search_files (glob, grep) and bulk_file_transfer; they use no shell."
}

// hostArg returns the host a call names in arg, "local" when unset.
func hostArg(call *rigout.Call, arg string) string {
	if h, ok := call.Args[arg].(string); ok && h != "" {
		return h
	}
	return "local"
}

// isLocal reports whether host leads to this machine.
func (f *Family) isLocal(ctx context.Context, host, principal string) (bool, error) {
	var hosts exec.Hosts = exec.LocalHosts{}
	if f.cfg.Router != nil {
		hosts = f.cfg.Router
	}
	t, err := hosts.Resolve(ctx, host, principal)
	return t.Local, err
}

// open returns the fileSystem of host for call: confined to the token's roots
// when it has any. The caller closes it.
func (f *Family) open(ctx context.Context, call *rigout.Call, host string) (fileSystem, error) {
	p := call.Principal()
	var roots []string
	for _, r := range p.Scopes.Roots {
		roots = append(roots, path.Clean(r))
	}
	local, err := f.isLocal(ctx, host, p.Name)
	if err != nil {
		return nil, err
	}
	if local {
		var fsys fileSystem = osFS{}
		if len(roots) > 0 {
			fsys = newRootFS(roots)
		}
		vf, err := f.cfg.Sandbox.Files(ctx)
		switch {
		case err == nil:
			fsys = &viewFS{vf: vf, roots: roots}
		case !errors.Is(err, exec.ErrNoViews):
			return nil, err
		}
		if len(f.cfg.Hidden) > 0 {
			fsys = &hiddenFS{fileSystem: fsys, hidden: f.cfg.Hidden}
		}
		return fsys, nil
	}
	// With roots, through the host's rigout helper where it runs (see
	// helperFS); else, and where it cannot (saying why), plain SFTP.
	var hf *remote.HelperFiles
	var info exec.HelperInfo
	var why string
	if len(roots) > 0 {
		var err error
		hf, info, err = f.cfg.Router.HelperFiles(ctx, host, p.Name)
		var he *remote.HelperError
		switch {
		case err == nil:
		case errors.As(err, &he) && !errors.Is(err, remote.ErrHelperRequired):
			why = he.Reason
		default:
			return nil, err
		}
	}
	l, err := f.cfg.Router.SFTP(ctx, host, p.Name)
	if err != nil {
		return nil, err
	}
	if hf != nil {
		return newHelperFS(ctx, hf, info, l, roots), nil
	}
	s := newSFTPFS(l, roots)
	if why != "" {
		s.route += " [no rigout helper: " + why + "]"
	}
	return s, nil
}

// resolver returns the Resolve function of a path argument whose host is
// named by hostArg: on this machine, ~ is the home directory and a
// relative path is taken from WorkDir; on an SSH host, ~/ and relative
// paths are relative to the login's home, which the SFTP server resolves
// (refused for a token confined to roots, which needs absolute paths).
// Nothing is opened: symbolic links are confined when the path is used.
func (f *Family) resolver(hostArgName string) func(context.Context, *rigout.Call, string) (string, error) {
	return func(ctx context.Context, call *rigout.Call, v string) (string, error) {
		if v == "" {
			return "", fmt.Errorf("empty path")
		}
		if len(v) > 4096 {
			return "", fmt.Errorf("path is %d bytes; the limit is 4096", len(v))
		}
		confined := len(call.Principal().Scopes.Roots) > 0
		local, err := f.isLocal(ctx, hostArg(call, hostArgName), call.Principal().Name)
		if err != nil {
			return "", err
		}
		if local {
			switch {
			case v == "~" || strings.HasPrefix(v, "~/"):
				if f.home == "" {
					return "", fmt.Errorf("%q: no home directory", v)
				}
				v = f.home + v[1:]
			case !path.IsAbs(v):
				v = path.Join(filepath.ToSlash(f.cfg.WorkDir), v)
			}
			return path.Clean(v), nil
		}
		if f.windowsHost(ctx, hostArg(call, hostArgName), call.Principal().Name, true) {
			// C:\Users\a, C:/Users/a and /C:/Users/a are one path: the
			// form Windows OpenSSH's SFTP server takes.
			v = strings.ReplaceAll(v, `\`, "/")
			if len(v) >= 2 && v[1] == ':' && isDriveLetter(v[0]) {
				v = sftpWindowsPath(v)
			}
		}
		if v == "~" {
			v = "."
		} else if strings.HasPrefix(v, "~/") {
			v = v[2:]
		}
		if !path.IsAbs(v) {
			if confined {
				return "", fmt.Errorf("%q is relative; this token is confined to file roots, so give an absolute path", v)
			}
			return path.Clean(v), nil
		}
		return path.Clean(v), nil
	}
}

// judge puts the command equivalent of a mutating action to the policy
// (protected roots, critical files), through the gate, so a file tool
// cannot do what the same command would be refused. A non-nil result is
// the call's answer.
func (f *Family) judge(ctx context.Context, call *rigout.Call, host string, argv ...string) *mcp.CallToolResult {
	if f.windowsHost(ctx, host, call.Principal().Name, false) {
		return f.gate.Check(ctx, call, gate.Command{Host: host, Argv: windowsArgv(argv), Dialect: validate.DialectCmd})
	}
	a := make([]string, len(argv))
	for i, s := range argv {
		a[i] = f.symbolicHome(host, s)
	}
	return f.gate.Check(ctx, call, gate.Command{Host: host, Argv: a})
}

// symbolicHome writes this machine's home directory as ~, which is how
// the policy names it among the protected roots.
func (f *Family) symbolicHome(host, p string) string {
	if host != "local" || f.home == "" || f.home == "/" {
		return p
	}
	if p == f.home {
		return "~"
	}
	if strings.HasPrefix(p, f.home+"/") {
		return "~" + p[len(f.home):]
	}
	return p
}

// failed returns an error result for err, specific about confinement.
func failed(call *rigout.Call, what string, err error) (*mcp.CallToolResult, error) {
	msg := fmt.Sprintf("%s: %v", what, err)
	// "read /x: open /x: no such file or directory" says the path twice.
	if pe, ok := err.(*fs.PathError); ok && strings.Contains(what, pe.Path) {
		msg = fmt.Sprintf("%s: %v", what, pe.Err)
	}
	if errors.Is(err, errHidden) {
		call.Outcome.Status = audit.StatusDenied
	}
	if isOutside(err) {
		call.Outcome.Status = audit.StatusDenied
		msg += "\nThis token is confined to its file roots; a symbolic link or .. that leads out of them is refused. Nothing was changed."
	}
	call.Outcome.Error = msg
	return rigout.ErrorResult("%s", msg), nil
}

// isOutside reports whether err is a confinement refusal.
func isOutside(err error) bool { return errors.Is(err, errOutsideRoot) }
