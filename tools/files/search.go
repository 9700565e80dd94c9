package files

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/textsafe"
	"github.com/rigout/rigout/tools/internal/family"
)

// maxGrepFileBytes skips larger files in grep.
const maxGrepFileBytes = 64 << 20

const searchFilesDescription = "Find files. glob: paths matching pattern (** any depth), newest first. " +
	"grep: regexp matches as file:line:text, skipping .git, node_modules and binaries."

var searchFilesInput = json.RawMessage(`{
  "type": "object",
  "properties": {
    "mode": {"type": "string", "enum": ["glob", "grep"]},
    "pattern": {"type": "string", "minLength": 1, "description": "glob: e.g. **/*.go; grep: RE2 regexp."},
    "path": {"type": "string", "description": "Directory. Default the working directory."},
    "host": {"type": "string"},
    "include": {"type": "string", "description": "grep: file name glob, e.g. *.go."},
    "case_insensitive": {"type": "boolean"},
    "context": {"type": "integer", "minimum": 0, "maximum": 10, "description": "grep: 0-10 lines around each match."},
    "max_results": {"type": "integer", "minimum": 1}
  },
  "required": ["mode", "pattern"],
  "additionalProperties": false
}`)

// SearchFiles returns the search_files tool.
func (f *Family) SearchFiles() rigout.Tool {
	return rigout.Tool{
		Name:        "search_files",
		Description: searchFilesDescription,
		InputSchema: json.RawMessage(f.withSecrets(searchFilesInput)),
		Risk:        rigout.ReadOnly,
		Hosts:       []rigout.HostArg{{Name: "host"}},
		DefaultHost: "local",
		Paths:       []rigout.PathArg{{Name: "path", Resolve: f.resolver("host")}},
		Handler:     f.searchFiles,
	}
}

type searchArgs struct {
	Mode            string `json:"mode"`
	Pattern         string `json:"pattern"`
	Include         string `json:"include"`
	CaseInsensitive bool   `json:"case_insensitive"`
	Context         int    `json:"context"`
	MaxResults      int    `json:"max_results"`

	Secrets map[string]string `json:"secrets"`
	mask    func(string) string
}

// skipDir reports directories search never enters.
func skipDir(name string) bool { return name == ".git" || name == "node_modules" }

func (f *Family) searchFiles(ctx context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
	var a searchArgs
	if err := call.Bind(&a); err != nil {
		return nil, err
	}
	root, ok := call.Path("path")
	host := call.Hosts()[0]
	if !ok {
		local, err := f.isLocal(ctx, host, call.Principal().Name)
		if err != nil {
			return failed(call, "cannot reach "+host, err)
		}
		if !local {
			return family.Invalid(call, "search_files on an SSH host needs `path`")
		}
		root = f.cfg.WorkDir
		if err := call.Principal().Scopes.RequirePath(root); err != nil {
			return family.Invalid(call, "give `path`: the default, %s, is outside this token's file roots", root)
		}
	}
	limit := f.cfg.MaxResults
	if a.MaxResults > 0 && a.MaxResults < limit {
		limit = a.MaxResults
	}
	fsys, err := f.open(ctx, call, host)
	if err != nil {
		return failed(call, "cannot reach "+host, err)
	}
	defer fsys.Close()
	call.Outcome.Route = fsys.Route()
	call.Outcome.Detail = map[audit.DetailKey]string{audit.DetailPath: root}
	cs, refused := f.useSecrets(ctx, call, a.Secrets, []string{host}, []string{root})
	if refused != nil {
		return refused, nil
	}
	// Lines are masked before they are matched: a pattern cannot test
	// guesses at a credential.
	a.mask = cs.maskFunc()
	sctx, cancel := context.WithTimeout(ctx, f.cfg.SearchTimeout)
	defer cancel()
	var out string
	switch a.Mode {
	case "glob":
		if _, err := path.Match(strings.ReplaceAll(a.Pattern, "**", "*"), ""); err != nil {
			return family.Invalid(call, "bad glob %q: %v", a.Pattern, err)
		}
		out, err = f.glob(sctx, fsys, root, a.Pattern, limit)
	case "grep":
		expr := a.Pattern
		if a.CaseInsensitive {
			expr = "(?i)" + expr
		}
		re, rerr := regexp.Compile(expr)
		if rerr != nil {
			return family.Invalid(call, "bad regular expression: %v", rerr)
		}
		if a.Include != "" {
			if _, err := path.Match(a.Include, ""); err != nil {
				return family.Invalid(call, "bad include glob %q: %v", a.Include, err)
			}
		}
		out, err = f.grep(sctx, fsys, root, re, a, limit)
	default:
		return family.Invalid(call, "mode must be glob or grep")
	}
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return failed(call, "search "+root, err)
	}
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		out += fmt.Sprintf("[stopped after the %v search time limit; narrow path or pattern]\n", f.cfg.SearchTimeout)
		call.Outcome.Truncated = true
	}
	return rigout.TextResult(textsafe.Text([]byte(out)) + "(via " + fsys.Route() + ")"), nil
}

// globMatch matches a slash-separated relative path against pattern,
// where ** matches any number of directories.
func globMatch(pattern, name string) bool {
	ps, ns := strings.Split(pattern, "/"), strings.Split(name, "/")
	var match func(i, j int) bool
	match = func(i, j int) bool {
		for i < len(ps) {
			if ps[i] == "**" {
				for k := j; k <= len(ns); k++ {
					if match(i+1, k) {
						return true
					}
				}
				return false
			}
			if j >= len(ns) {
				return false
			}
			if ok, _ := path.Match(ps[i], ns[j]); !ok {
				return false
			}
			i, j = i+1, j+1
		}
		return j == len(ns)
	}
	return match(0, 0)
}

func (f *Family) glob(ctx context.Context, fsys fileSystem, root, pattern string, limit int) (string, error) {
	type hit struct {
		p   string
		mod time.Time
	}
	var hits []hit
	// A pattern without a slash matches names at any depth, as most
	// agents mean "*.go".
	if !strings.Contains(pattern, "/") {
		pattern = "**/" + pattern
	}
	const maxScan = 1_000_000
	scanned := 0
	err := walk(ctx, fsys, root, func(p string, fi fs.FileInfo) error {
		if p == root {
			return nil
		}
		if fi.IsDir() && skipDir(fi.Name()) {
			return fs.SkipDir
		}
		if scanned++; scanned > maxScan {
			return errTooMany
		}
		if globMatch(pattern, strings.TrimPrefix(p, strings.TrimSuffix(root, "/")+"/")) {
			hits = append(hits, hit{p, fi.ModTime()})
		}
		return nil
	})
	slices.SortFunc(hits, func(a, b hit) int { return b.mod.Compare(a.mod) })
	var sb strings.Builder
	n := len(hits)
	if n > limit {
		hits = hits[:limit]
	}
	for _, h := range hits {
		sb.WriteString(h.p + "\n")
	}
	switch {
	case n == 0:
		sb.WriteString("no files match\n")
	case n > limit:
		fmt.Fprintf(&sb, "[%d of %d matches shown, newest first]\n", limit, n)
	}
	if errors.Is(err, errTooMany) {
		fmt.Fprintf(&sb, "[stopped after %d entries; narrow path]\n", maxScan)
		err = nil
	}
	return sb.String(), err
}

var errTooMany = errors.New("files: too many entries")

// errEnough stops a walk once the result cap is reached.
var errEnough = errors.New("files: enough results")

func (f *Family) grep(ctx context.Context, fsys fileSystem, root string, re *regexp.Regexp, a searchArgs, limit int) (string, error) {
	var sb strings.Builder
	matches, files := 0, 0
	err := walk(ctx, fsys, root, func(p string, fi fs.FileInfo) error {
		if fi.IsDir() {
			if p != root && skipDir(fi.Name()) {
				return fs.SkipDir
			}
			return nil
		}
		if !fi.Mode().IsRegular() || fi.Size() > maxGrepFileBytes {
			return nil
		}
		if a.Include != "" {
			if ok, _ := path.Match(a.Include, fi.Name()); !ok {
				return nil
			}
		}
		n, err := grepFile(ctx, fsys, p, re, a.Context, limit-matches, a.mask, &sb)
		if err != nil {
			return nil // unreadable files are skipped
		}
		if n > 0 {
			files++
		}
		matches += n
		if matches >= limit {
			return errEnough
		}
		return nil
	})
	if errors.Is(err, errEnough) {
		fmt.Fprintf(&sb, "[stopped at %d matches; narrow the pattern or raise max_results]\n", limit)
		err = nil
	} else if matches == 0 && err == nil {
		sb.WriteString("no matches\n")
	}
	return sb.String(), err
}

// grepFile appends the matches of one file, with context lines, and
// returns how many it found (at most limit). Binary files are skipped.
// mask, if not nil, is applied to each line before it is matched or cut.
func grepFile(ctx context.Context, fsys fileSystem, p string, re *regexp.Regexp, context, limit int, mask func(string) string, sb *strings.Builder) (int, error) {
	fl, err := fsys.Open(p)
	if err != nil {
		return 0, err
	}
	defer fl.Close()
	br := bufio.NewReaderSize(fl, 64<<10)
	head, _ := br.Peek(sniffLen)
	if isBinary(head) {
		return 0, nil
	}
	var before []string // the last context lines
	after := 0
	last := 0 // the last line written
	n, line := 0, 0
	for {
		if line%4096 == 0 && ctx.Err() != nil {
			return n, ctx.Err()
		}
		b, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			b = append([]byte(nil), b...)
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
		}
		if len(b) == 0 && err != nil {
			break
		}
		line++
		text := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
		if mask != nil {
			text = mask(text)
		}
		if len(text) > maxLineShown {
			text = text[:maxLineShown] + " … [line cut]"
		}
		switch {
		case n < limit && re.MatchString(text):
			if context > 0 && last > 0 && line-len(before) > last+1 {
				sb.WriteString("--\n")
			}
			for i, l := range before {
				fmt.Fprintf(sb, "%s-%d-%s\n", p, line-len(before)+i, l)
			}
			before = before[:0]
			fmt.Fprintf(sb, "%s:%d:%s\n", p, line, text)
			n++
			last, after = line, context
		case after > 0:
			fmt.Fprintf(sb, "%s-%d-%s\n", p, line, text)
			last = line
			after--
		case n >= limit:
			return n, nil
		case context > 0:
			before = append(before, text)
			if len(before) > context {
				before = before[1:]
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
