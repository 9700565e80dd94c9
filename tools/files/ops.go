package files

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os/user"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/textsafe"
	"github.com/rigout/rigout/tools/internal/family"
)

const fileOperationsDescription = "Files without a shell, local or over SFTP. " +
	"read: numbered lines (offset/limit, or tail), 64 KiB cap. write/append: atomic. " +
	"edit: old_string must match once (or replace_all); returns a diff."

var fileOperationsInput = json.RawMessage(`{
  "type": "object",
  "properties": {
    "action": {"type": "string", "enum": ["read", "write", "append", "edit", "delete", "copy", "move", "chmod", "chown", "list", "stat", "mkdir"]},
    "path": {"type": "string", "minLength": 1},
    "host": {"type": "string", "description": "Default local."},
    "destination": {"type": "string", "description": "copy, move: target path."},
    "content": {"type": "string", "description": "write, append."},
    "offset": {"type": "integer", "minimum": 1, "description": "read: first line."},
    "limit": {"type": "integer", "minimum": 1, "description": "read: lines (2000). list: entries."},
    "tail": {"type": "integer", "minimum": 1, "description": "read: the last N lines instead."},
    "old_string": {"type": "string", "minLength": 1},
    "new_string": {"type": "string"},
    "replace_all": {"type": "boolean"},
    "expected_sha256": {"type": "string", "description": "Refuse if the file's hash differs."},
    "create_parents": {"type": "boolean"},
    "recursive": {"type": "boolean", "description": "For a directory."},
    "mode": {"type": "string", "description": "Octal, e.g. 644."},
    "owner": {"type": "string", "description": "user, user:group or uid:gid."}
  },
  "required": ["action", "path"],
  "additionalProperties": false
}`)

// FileOperations returns the file_operations tool.
func (f *Family) FileOperations() rigout.Tool {
	m := rigout.Mutating
	return rigout.Tool{
		Name:        "file_operations",
		Description: fileOperationsDescription,
		InputSchema: json.RawMessage(f.withSecrets(fileOperationsInput)),
		Action:      "action",
		Actions: map[string]rigout.Risk{
			"read": rigout.ReadOnly, "list": rigout.ReadOnly, "stat": rigout.ReadOnly,
			"write": m, "append": m, "edit": m, "delete": m, "copy": m, "move": m,
			"chmod": m, "chown": m, "mkdir": m,
		},
		Hosts:       []rigout.HostArg{{Name: "host"}},
		DefaultHost: "local",
		Paths:       []rigout.PathArg{{Name: "path", Resolve: f.resolver("host")}, {Name: "destination", Resolve: f.resolver("host")}},
		Recorded:    []string{"action", "path", "destination", "mode", "owner"},
		Handler:     f.fileOperations,
	}
}

// opArgs are file_operations' arguments.
type opArgs struct {
	Action         string            `json:"action"`
	Content        *string           `json:"content"`
	Offset         int               `json:"offset"`
	Limit          int               `json:"limit"`
	Tail           int               `json:"tail"`
	OldString      string            `json:"old_string"`
	NewString      *string           `json:"new_string"`
	ReplaceAll     bool              `json:"replace_all"`
	ExpectedSHA256 string            `json:"expected_sha256"`
	CreateParents  bool              `json:"create_parents"`
	Recursive      bool              `json:"recursive"`
	Mode           string            `json:"mode"`
	Owner          string            `json:"owner"`
	Secrets        map[string]string `json:"secrets"`
}

// op is one file_operations call in progress.
type op struct {
	f    *Family
	call *rigout.Call
	fsys fileSystem
	host string
	path string
	dest string
	a    opArgs
	cs   *callSecrets // nil: no credentials involved
}

func (f *Family) fileOperations(ctx context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
	var a opArgs
	if err := call.Bind(&a); err != nil {
		return nil, err
	}
	p, _ := call.Path("path")
	dest, hasDest := call.Path("destination")
	switch a.Action {
	case "copy", "move":
		if !hasDest {
			return family.Invalid(call, "%s needs `destination`", a.Action)
		}
	case "write", "append":
		if a.Content == nil {
			return family.Invalid(call, "%s needs `content`", a.Action)
		}
	case "edit":
		if a.OldString == "" || a.NewString == nil {
			return family.Invalid(call, "edit needs `old_string` (the exact text to replace) and `new_string`")
		}
	case "chmod":
		if a.Mode == "" {
			return family.Invalid(call, "chmod needs `mode`, octal such as 644 or 0755")
		}
	case "chown":
		if a.Owner == "" {
			return family.Invalid(call, "chown needs `owner`: user, user:group, :group or uid:gid")
		}
	}
	if a.ExpectedSHA256 != "" {
		a.ExpectedSHA256 = strings.ToLower(a.ExpectedSHA256)
		if len(a.ExpectedSHA256) != 64 || strings.Trim(a.ExpectedSHA256, "0123456789abcdef") != "" {
			return family.Invalid(call, "expected_sha256 must be 64 hex digits")
		}
	}
	host := call.Hosts()[0]
	fsys, err := f.open(ctx, call, host)
	if err != nil {
		return failed(call, "cannot reach "+host, err)
	}
	defer fsys.Close()
	call.Outcome.Route = fsys.Route()
	call.Outcome.Detail = map[audit.DetailKey]string{audit.DetailPath: p}
	if hasDest {
		call.Outcome.Detail[audit.DetailDestination] = dest
	}
	paths := []string{p}
	if hasDest {
		paths = append(paths, dest)
	}
	cs, refused := f.useSecrets(ctx, call, a.Secrets, []string{host}, paths)
	if refused != nil {
		return refused, nil
	}
	o := &op{f: f, call: call, fsys: fsys, host: host, path: p, dest: dest, a: a, cs: cs}
	var res *mcp.CallToolResult
	switch a.Action {
	case "read":
		res, err = o.read()
	case "write", "append":
		res, err = o.write(ctx)
	case "edit":
		res, err = o.edit(ctx)
	case "delete":
		res, err = o.delete(ctx)
	case "copy":
		res, err = o.copy(ctx)
	case "move":
		res, err = o.move(ctx)
	case "chmod":
		res, err = o.chmod(ctx)
	case "chown":
		res, err = o.chown(ctx)
	case "list":
		res, err = o.list()
	case "stat":
		res, err = o.stat()
	case "mkdir":
		res, err = o.mkdir(ctx)
	default:
		return family.Invalid(call, "unknown action %q", a.Action)
	}
	if err != nil {
		var me *mismatchError
		var be *binaryError
		if errors.As(err, &me) || errors.As(err, &be) {
			if me != nil && me.Actual != "" && o.holdsCredential() {
				me.Actual = "[withheld: the file holds a credential]"
			}
			call.Outcome.Error = err.Error()
			return rigout.ErrorResult("%s", err.Error()), nil
		}
		return failed(call, a.Action+" "+p, err)
	}
	return res, nil
}

// via is the route suffix of every result.
func (o *op) via() string { return " (via " + o.fsys.Route() + ")" }

func (o *op) read() (*mcp.CallToolResult, error) {
	f, err := o.fsys.Open(o.path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("is a directory; use action list")
	}
	max := o.f.cfg.MaxReadBytes
	var res readResult
	if o.a.Tail > 0 {
		var raw []byte
		res, raw, err = tailLines(f, fi.Size(), o.a.Tail, max, o.cs.maskFunc())
		if err == nil && isBinary(raw[:min(len(raw), sniffLen)]) {
			return nil, &binaryError{Path: o.path, Size: fi.Size()}
		}
	} else {
		head := make([]byte, sniffLen)
		n, rerr := f.ReadAt(head, 0)
		if rerr != nil && rerr != io.EOF {
			return nil, rerr
		}
		if isBinary(head[:n]) {
			return nil, &binaryError{Path: o.path, Size: fi.Size()}
		}
		offset, limit := max1(o.a.Offset, 1), o.a.Limit
		if limit <= 0 {
			limit = o.f.cfg.ReadLines
		}
		res, err = readLines(f, offset, limit, max, o.cs.maskFunc())
	}
	if err != nil {
		return nil, err
	}
	o.call.Outcome.StdoutBytes = int64(len(res.text))
	o.call.Outcome.Truncated = res.truncated
	var hdr strings.Builder
	switch {
	case res.lines == 0 && o.a.Tail == 0 && res.first > 1:
		fmt.Fprintf(&hdr, "%s: %d bytes; no line %d (the file has fewer lines)%s\n", o.path, fi.Size(), res.first, o.via())
	case res.lines == 0:
		fmt.Fprintf(&hdr, "%s: empty%s\n", o.path, o.via())
	case o.a.Tail > 0:
		fmt.Fprintf(&hdr, "%s: last %d lines of %d bytes (numbered from the end: -1 is the last line)%s\n", o.path, res.lines, fi.Size(), o.via())
	default:
		fmt.Fprintf(&hdr, "%s: lines %d-%d, %d bytes%s\n", o.path, res.first, res.first+res.lines-1, fi.Size(), o.via())
	}
	text := hdr.String() + textsafe.Text([]byte(res.text))
	sc := readInfo{Path: o.path, Size: fi.Size(), FirstLine: res.first, Lines: res.lines, Truncated: res.truncated}
	switch {
	case res.truncated:
		text += fmt.Sprintf("[output reached the %d-byte cap; read on with offset/limit]\n", max)
	case res.more && o.a.Tail == 0:
		text += fmt.Sprintf("[more lines follow: offset=%d]\n", res.first+res.lines)
	}
	if res.more && o.a.Tail == 0 && res.lines > 0 {
		args := map[string]any{"action": "read", "path": o.path, "offset": res.first + res.lines}
		if h, ok := o.call.Args["host"].(string); ok && h != "" {
			args["host"] = h
		}
		sc.Next = &rigout.NextCall{Tool: o.call.Tool.Name, Arguments: args, Why: "reads the next lines"}
		text += sc.Next.Line()
	}
	r := rigout.TextResult(text)
	r.StructuredContent = sc
	return r, nil
}

// readInfo is a read's structuredContent: what the text shows, and the
// read that goes on.
type readInfo struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
	// FirstLine is the first line shown (negative from the end, for a
	// tail); Lines how many are shown.
	FirstLine int              `json:"first_line"`
	Lines     int              `json:"lines"`
	Truncated bool             `json:"truncated,omitempty"`
	Next      *rigout.NextCall `json:"next,omitempty"`
}

func max1(v, d int) int {
	if v <= 0 {
		return d
	}
	return v
}

// parseMode parses an octal permission string.
func parseMode(s string) (fs.FileMode, error) {
	v, err := strconv.ParseUint(strings.TrimPrefix(s, "0o"), 8, 32)
	if err != nil || v > 0o7777 {
		return 0, fmt.Errorf("mode %q is not an octal permission such as 644 or 0755", s)
	}
	m := fs.FileMode(v & 0o777)
	if v&0o4000 != 0 {
		m |= fs.ModeSetuid
	}
	if v&0o2000 != 0 {
		m |= fs.ModeSetgid
	}
	if v&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	return m, nil
}

func (o *op) write(ctx context.Context) (*mcp.CallToolResult, error) {
	verb, argv := "wrote", []string{"tee", "--", o.path}
	if o.a.Action == "append" {
		verb, argv = "appended", []string{"tee", "-a", "--", o.path}
	}
	if res := o.f.judge(ctx, o.call, o.host, argv...); res != nil {
		return res, nil
	}
	opts := publishOptions{createParents: o.a.CreateParents, expectedSHA256: o.a.ExpectedSHA256}
	if o.a.Mode != "" {
		m, err := parseMode(o.a.Mode)
		if err != nil {
			return family.Invalid(o.call, "%v", err)
		}
		opts.mode = m
	}
	if o.a.Action == "append" {
		if old, err := o.fsys.Open(o.path); err == nil {
			defer old.Close()
			opts.prefix = old
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	content, used, err := o.cs.substitute("content", *o.a.Content)
	if err != nil {
		return family.Invalid(o.call, "%v: nothing was written", err)
	}
	pub, err := publish(o.fsys, o.path, strings.NewReader(content), opts)
	if err != nil {
		return nil, err
	}
	switch {
	case used:
		o.f.written.remember(o.host, o.path, o.cs.aliasesUsed(*o.a.Content))
	case o.a.Action == "write":
		o.f.written.forget(o.host, o.path, "") // replaced: no credential of ours now
	}
	o.detail(pub)
	sha := "sha256 " + pub.SHA256
	if o.holdsCredential() || used {
		sha = "sha256 withheld (the file holds a credential)"
	}
	return rigout.TextResult(fmt.Sprintf("%s %d bytes to %s; the file is now %d bytes, %s%s",
		verb, len(*o.a.Content), o.path, pub.Bytes, sha, o.via())), nil
}

// holdsCredential reports whether the call masks credentials: it named
// secrets, or its file was written with one. Hashes of such a file are
// withheld, since a hash of known text around a weak password lets it be
// guessed offline.
func (o *op) holdsCredential() bool { return o.cs != nil && o.cs.mask != nil }

// detail records a publish in the ledger's detail.
func (o *op) detail(pub published) {
	o.call.Outcome.Detail[audit.DetailBytes] = strconv.FormatInt(pub.Bytes, 10)
	o.call.Outcome.Detail[audit.DetailSHA256] = pub.SHA256
	if o.holdsCredential() || len(o.f.written.aliases([]string{o.host}, []string{o.path})) > 0 {
		o.call.Outcome.Detail[audit.DetailSHA256] = "withheld"
	}
}

func (o *op) delete(ctx context.Context) (*mcp.CallToolResult, error) {
	fi, err := o.fsys.Lstat(o.path)
	if err != nil {
		return nil, err
	}
	if fi.IsDir() && !o.a.Recursive {
		return family.Invalid(o.call, "%s is a directory; set recursive: true to delete it and everything in it", o.path)
	}
	argv := []string{"rm", "--", o.path}
	if fi.IsDir() {
		argv = []string{"rm", "-r", "-f", "--", o.path}
	}
	if res := o.f.judge(ctx, o.call, o.host, argv...); res != nil {
		return res, nil
	}
	if !fi.IsDir() {
		if err := o.fsys.Remove(o.path); err != nil {
			return nil, err
		}
		o.f.written.forget(o.host, o.path, "")
		return rigout.TextResult("deleted " + o.path + o.via()), nil
	}
	n, err := removeAll(ctx, o.fsys, o.path)
	o.call.Outcome.Detail[audit.DetailEntries] = strconv.Itoa(n)
	if err != nil {
		return nil, fmt.Errorf("after deleting %d entries: %w", n, err)
	}
	return rigout.TextResult(fmt.Sprintf("deleted %s and everything in it (%d entries)%s", o.path, n, o.via())), nil
}

// target is where copy and move put path: into destination when it is an
// existing directory, else destination itself.
func (o *op) target() string {
	if fi, err := o.fsys.Stat(o.dest); err == nil && fi.IsDir() {
		return path.Join(o.dest, path.Base(o.path))
	}
	return o.dest
}

func (o *op) copy(ctx context.Context) (*mcp.CallToolResult, error) {
	fi, err := o.fsys.Lstat(o.path)
	if err != nil {
		return nil, err
	}
	if fi.IsDir() && !o.a.Recursive {
		return family.Invalid(o.call, "%s is a directory; set recursive: true to copy it and everything in it", o.path)
	}
	dst := o.target()
	if dst == o.path || within(dst, o.path) && fi.IsDir() {
		return family.Invalid(o.call, "cannot copy %s into itself (%s)", o.path, dst)
	}
	argv := []string{"cp", "--", o.path, dst}
	if fi.IsDir() {
		argv = []string{"cp", "-r", "--", o.path, dst}
	}
	if res := o.f.judge(ctx, o.call, o.host, argv...); res != nil {
		return res, nil
	}
	var files, skipped int
	var bytes int64
	err = walk(ctx, o.fsys, o.path, func(p string, e fs.FileInfo) error {
		to := path.Join(dst, strings.TrimPrefix(p, o.path))
		switch {
		case e.IsDir():
			return mkdirAll(o.fsys, to, e.Mode().Perm()|0o700)
		case e.Mode().IsRegular():
			src, err := o.fsys.Open(p)
			if err != nil {
				return err
			}
			defer src.Close()
			pub, err := publish(o.fsys, to, src, publishOptions{mode: e.Mode().Perm(), createParents: o.a.CreateParents || p != o.path})
			if err != nil {
				return err
			}
			o.f.written.remember(o.host, to, o.f.written.aliases([]string{o.host}, []string{p}))
			files++
			bytes += pub.Bytes
			if p == o.path {
				o.detail(pub)
			}
		default:
			skipped++ // links, devices, sockets: not copied
		}
		return nil
	})
	o.call.Outcome.Detail[audit.DetailFiles] = strconv.Itoa(files)
	if err != nil {
		return nil, fmt.Errorf("after copying %d files: %w", files, err)
	}
	msg := fmt.Sprintf("copied %s to %s: %d files, %d bytes", o.path, dst, files, bytes)
	if skipped > 0 {
		msg += fmt.Sprintf("; %d symbolic links or special files were not copied", skipped)
	}
	return rigout.TextResult(msg + o.via()), nil
}

func (o *op) move(ctx context.Context) (*mcp.CallToolResult, error) {
	if _, err := o.fsys.Lstat(o.path); err != nil {
		return nil, err
	}
	dst := o.target()
	if res := o.f.judge(ctx, o.call, o.host, "mv", "--", o.path, dst); res != nil {
		return res, nil
	}
	if o.a.CreateParents {
		if err := mkdirAll(o.fsys, path.Dir(dst), 0o755); err != nil {
			return nil, err
		}
	}
	if err := o.fsys.Rename(o.path, dst); err != nil {
		return nil, fmt.Errorf("%w (across file systems or roots, copy then delete)", err)
	}
	o.f.written.forget(o.host, o.path, dst)
	return rigout.TextResult(fmt.Sprintf("moved %s to %s%s", o.path, dst, o.via())), nil
}

func (o *op) chmod(ctx context.Context) (*mcp.CallToolResult, error) {
	m, err := parseMode(o.a.Mode)
	if err != nil {
		return family.Invalid(o.call, "%v", err)
	}
	argv := []string{"chmod", o.a.Mode, "--", o.path}
	if o.a.Recursive {
		argv = []string{"chmod", "-R", o.a.Mode, "--", o.path}
	}
	if res := o.f.judge(ctx, o.call, o.host, argv...); res != nil {
		return res, nil
	}
	n, err := o.apply(ctx, func(p string) error { return o.fsys.Chmod(p, m) })
	if err != nil {
		return nil, err
	}
	return rigout.TextResult(fmt.Sprintf("chmod %s: %d entries under %s%s", o.a.Mode, n, o.path, o.via())), nil
}

// apply runs fn on path, and with recursive on everything below it;
// symbolic links are skipped (a mode or owner change would follow them).
func (o *op) apply(ctx context.Context, fn func(string) error) (int, error) {
	if !o.a.Recursive {
		if err := fn(o.path); err != nil {
			return 0, err
		}
		return 1, nil
	}
	n := 0
	err := walk(ctx, o.fsys, o.path, func(p string, fi fs.FileInfo) error {
		if fi.Mode()&fs.ModeSymlink != 0 {
			return nil
		}
		n++
		return fn(p)
	})
	return n, err
}

func (o *op) chown(ctx context.Context) (*mcp.CallToolResult, error) {
	uid, gid, err := o.owner(o.a.Owner)
	if err != nil {
		return family.Invalid(o.call, "%v", err)
	}
	argv := []string{"chown", o.a.Owner, "--", o.path}
	if o.a.Recursive {
		argv = []string{"chown", "-R", o.a.Owner, "--", o.path}
	}
	if res := o.f.judge(ctx, o.call, o.host, argv...); res != nil {
		return res, nil
	}
	n, err := o.apply(ctx, func(p string) error {
		u, g := uid, gid
		if u < 0 || g < 0 { // keep the half not named
			fi, err := o.fsys.Lstat(p)
			if err != nil {
				return err
			}
			ou, og := owner(fi)
			if u < 0 {
				u = ou
			}
			if g < 0 {
				g = og
			}
		}
		return o.fsys.Chown(p, u, g)
	})
	if err != nil {
		return nil, err
	}
	return rigout.TextResult(fmt.Sprintf("chown %s (uid %d, gid %d): %d entries under %s, without sudo%s", o.a.Owner, uid, gid, n, o.path, o.via())), nil
}

// owner parses user[:group] into ids (-1 for a half not given). Names
// are looked up on this machine, or in the host's /etc/passwd and
// /etc/group read over SFTP.
func (o *op) owner(s string) (uid, gid int, err error) {
	u, g, _ := strings.Cut(s, ":")
	uid, gid = -1, -1
	if u != "" {
		if uid, err = o.lookup(u, false); err != nil {
			return 0, 0, err
		}
	}
	if g != "" {
		if gid, err = o.lookup(g, true); err != nil {
			return 0, 0, err
		}
	}
	if uid < 0 && gid < 0 {
		return 0, 0, fmt.Errorf("owner %q names neither a user nor a group", s)
	}
	return uid, gid, nil
}

func (o *op) lookup(name string, group bool) (int, error) {
	if n, err := strconv.Atoi(name); err == nil && n >= 0 {
		return n, nil
	}
	kind := "user"
	if group {
		kind = "group"
	}
	if s, ok := sftpOf(o.fsys); ok {
		file := "/etc/passwd"
		if group {
			file = "/etc/group"
		}
		f, err := s.c.Open(file)
		if err != nil {
			return 0, fmt.Errorf("%s %q: cannot read %s on the host (%v); give a number", kind, name, file, err)
		}
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, 4<<20))
		if err != nil {
			return 0, err
		}
		for _, line := range strings.Split(string(b), "\n") {
			fields := strings.Split(line, ":")
			if len(fields) >= 3 && fields[0] == name {
				if n, err := strconv.Atoi(fields[2]); err == nil {
					return n, nil
				}
			}
		}
		return 0, fmt.Errorf("no %s %q in the host's %s", kind, name, file)
	}
	if group {
		g, err := user.LookupGroup(name)
		if err != nil {
			return 0, fmt.Errorf("no group %q on this machine", name)
		}
		return strconv.Atoi(g.Gid)
	}
	u, err := user.Lookup(name)
	if err != nil {
		return 0, fmt.Errorf("no user %q on this machine", name)
	}
	return strconv.Atoi(u.Uid)
}

// entry is one file in list and stat results.
type entry struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Size     int64  `json:"size"`
	Mode     string `json:"mode"`
	Modified string `json:"modified"`
	UID      int    `json:"uid"`
	GID      int    `json:"gid"`
	Target   string `json:"link_target,omitempty"`
}

func fileType(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "dir"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m.IsRegular():
		return "file"
	}
	return "special"
}

func (o *op) entryOf(p string, fi fs.FileInfo) entry {
	uid, gid := owner(fi)
	e := entry{Name: fi.Name(), Type: fileType(fi.Mode()), Size: fi.Size(),
		Mode: fmt.Sprintf("%04o", fi.Mode().Perm()), Modified: fi.ModTime().UTC().Format(time.RFC3339), UID: uid, GID: gid}
	if e.Type == "symlink" {
		if t, err := o.fsys.Readlink(p); err == nil {
			e.Target = t
		}
	}
	return e
}

func (o *op) list() (*mcp.CallToolResult, error) {
	fi, err := o.fsys.Stat(o.path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("not a directory; use action stat or read")
	}
	infos, err := o.fsys.ReadDir(o.path)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(infos, func(a, b fs.FileInfo) int { return strings.Compare(a.Name(), b.Name()) })
	limit := o.a.Limit
	if limit <= 0 || limit > o.f.cfg.MaxResults*10 {
		limit = o.f.cfg.MaxResults * 10
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s: %d entries%s\n", o.path, len(infos), o.via())
	for i, e := range infos {
		if i == limit {
			fmt.Fprintf(&sb, "[%d more entries not shown; raise limit or use search_files]\n", len(infos)-limit)
			o.call.Outcome.Truncated = true
			break
		}
		en := o.entryOf(path.Join(o.path, e.Name()), e)
		name := en.Name
		switch en.Type {
		case "dir":
			name += "/"
		case "symlink":
			name += " -> " + en.Target
		}
		fmt.Fprintf(&sb, "%-7s %s %10d %s %s\n", en.Type, en.Mode, en.Size, en.Modified, name)
	}
	return rigout.TextResult(textsafe.Text([]byte(sb.String()))), nil
}

func (o *op) stat() (*mcp.CallToolResult, error) {
	fi, err := o.fsys.Lstat(o.path)
	if err != nil {
		return nil, err
	}
	e := o.entryOf(o.path, fi)
	e.Name = o.path
	b, _ := json.MarshalIndent(struct {
		entry
		Route string `json:"route"`
	}{e, o.fsys.Route()}, "", " ")
	return rigout.TextResult(textsafe.Text(b)), nil
}

func (o *op) mkdir(ctx context.Context) (*mcp.CallToolResult, error) {
	mode := fs.FileMode(0o755)
	if o.a.Mode != "" {
		m, err := parseMode(o.a.Mode)
		if err != nil {
			return family.Invalid(o.call, "%v", err)
		}
		mode = m
	}
	if res := o.f.judge(ctx, o.call, o.host, "mkdir", "-p", "--", o.path); res != nil {
		return res, nil
	}
	if fi, err := o.fsys.Stat(o.path); err == nil && fi.IsDir() {
		return rigout.TextResult(o.path + " already exists" + o.via()), nil
	}
	var err error
	if o.a.CreateParents {
		err = mkdirAll(o.fsys, o.path, mode)
	} else {
		err = o.fsys.Mkdir(o.path, mode)
		if errors.Is(err, fs.ErrNotExist) {
			err = fmt.Errorf("%w; set create_parents to create missing parents", err)
		}
	}
	if err != nil {
		return nil, err
	}
	return rigout.TextResult("created " + o.path + o.via()), nil
}
