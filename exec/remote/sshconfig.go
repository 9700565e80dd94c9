package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/kevinburke/ssh_config"
)

// This file reads OpenSSH client configuration (ssh_config(5)) with
// github.com/kevinburke/ssh_config for the lexing, the Host blocks and
// their patterns, and adds what that parser leaves out:
//
//   - "the first obtained value will be used", across Include files, in
//     the order OpenSSH reads them;
//   - Include resolved against the configured home directory (never the
//     process's), with the included file's own Host blocks scoped to it;
//   - Match blocks: all, host, originalhost, user, localuser, final and
//     canonical are evaluated; exec, and any criterion we cannot evaluate,
//     make the block never match (Match exec would run a local command);
//   - directives that run local commands (ProxyCommand unless enabled,
//     LocalCommand, KnownHostsCommand) are reported and ignored.
//
// The parser rejects Match criteria it does not know and treats Include
// relative to the real home directory, so lines starting with Include and
// Match are rewritten before it sees them: Include becomes a private
// keyword that the walker below resolves, and Match becomes a Host line
// with a placeholder pattern that no host name can equal ('@' is never
// part of a host), whose criteria are kept aside.

const (
	includeKeyword = "RigoutInclude"
	matchPrefix    = "@rigout-match-"
	// maxIncludeDepth matches OpenSSH's READCONF_MAX_DEPTH.
	maxIncludeDepth = 16
)

// sshConfig is a parsed set of ssh_config files.
type sshConfig struct {
	files   []*configFile
	matches []matchRule
	// aliases are the literal names of Host lines, in file order.
	aliases []string
}

type configFile struct {
	path     string
	cfg      *ssh_config.Config
	includes map[*ssh_config.KV][]*configFile
}

type matchRule struct {
	file  string
	line  int
	terms []matchTerm
	// never is set when the block can never match: Match exec, or a
	// criterion rigout does not evaluate.
	never bool
}

type matchTerm struct {
	negate bool
	kind   string
	arg    string
}

type configLoader struct {
	home    string
	logger  *slog.Logger
	unsafe  unsafeOptions
	sc      *sshConfig
	loading map[string]bool
}

// unsafeOptions are the ssh_config features that run local commands.
type unsafeOptions struct {
	proxyCommand bool
}

// loadSSHConfig parses the given files in order. Missing files are skipped,
// as OpenSSH skips a missing ~/.ssh/config. home expands ~ and resolves
// relative Include paths (~/.ssh/...).
func loadSSHConfig(paths []string, home string, logger *slog.Logger, unsafe unsafeOptions) (*sshConfig, error) {
	l := &configLoader{home: home, logger: logger, unsafe: unsafe, sc: &sshConfig{}, loading: map[string]bool{}}
	for _, p := range paths {
		f, err := l.load(expandTilde(p, home), 0)
		if err != nil {
			return nil, err
		}
		if f != nil {
			l.sc.files = append(l.sc.files, f)
		}
	}
	return l.sc, nil
}

// parseSSHConfig parses one file's contents; tests and fuzzing use it.
func parseSSHConfig(data []byte, name, home string, logger *slog.Logger) (*sshConfig, error) {
	l := &configLoader{home: home, logger: logger, sc: &sshConfig{}, loading: map[string]bool{}}
	f, err := l.parse(data, name, 0)
	if err != nil {
		return nil, err
	}
	l.sc.files = append(l.sc.files, f)
	return l.sc, nil
}

func (l *configLoader) load(path string, depth int) (*configFile, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("exec: ssh config: %w", err)
	}
	return l.parse(data, path, depth)
}

func (l *configLoader) parse(data []byte, path string, depth int) (f *configFile, err error) {
	if depth > maxIncludeDepth {
		return nil, fmt.Errorf("exec: ssh config %s: Include nested more than %d deep", path, maxIncludeDepth)
	}
	if l.loading[path] {
		return nil, fmt.Errorf("exec: ssh config %s: Include loop", path)
	}
	l.loading[path] = true
	defer delete(l.loading, path)

	src := l.rewrite(data, path)
	cfg, err := decodeConfig(src)
	if err != nil {
		return nil, fmt.Errorf("exec: ssh config %s: %v", path, err)
	}
	f = &configFile{path: path, cfg: cfg, includes: map[*ssh_config.KV][]*configFile{}}
	for i, h := range cfg.Hosts {
		if _, ok := matchIndex(h); !ok && i > 0 {
			// Hosts[0] is the parser's implicit "Host *" block.
			for _, p := range h.Patterns {
				s := strings.Trim(p.String(), `"`)
				if strings.HasPrefix(s, "!") || strings.ContainsAny(s, "*?") {
					continue
				}
				if checkHostName(s) == nil && !slices.Contains(l.sc.aliases, s) {
					l.sc.aliases = append(l.sc.aliases, s)
				}
			}
		}
		for _, n := range h.Nodes {
			kv, ok := n.(*ssh_config.KV)
			if !ok {
				continue
			}
			switch strings.ToLower(kv.Key) {
			case strings.ToLower(includeKeyword):
				files, err := l.include(kv.Value, path, depth)
				if err != nil {
					return nil, err
				}
				f.includes[kv] = files
			case "localcommand", "permitlocalcommand", "knownhostscommand":
				l.ignored(path, kv, "runs a local command")
			case "proxycommand":
				if !l.unsafe.proxyCommand && !strings.EqualFold(kv.Value, "none") {
					l.ignored(path, kv, "runs a local command; enable it with UnsafeProxyCommand")
				}
			}
		}
	}
	return f, nil
}

func (l *configLoader) ignored(path string, kv *ssh_config.KV, why string) {
	l.logger.LogAttrs(context.Background(), slog.LevelWarn, "ssh config directive ignored",
		slog.String("file", path), slog.Int("line", kv.Pos().Line),
		slog.String("directive", kv.Key), slog.String("reason", why))
}

// decodeConfig runs the parser, turning a panic on odd input into an error.
func decodeConfig(src []byte) (cfg *ssh_config.Config, err error) {
	defer func() {
		if r := recover(); r != nil {
			cfg, err = nil, fmt.Errorf("unparseable: %v", r)
		}
	}()
	return ssh_config.DecodeBytes(src)
}

// include resolves the globs of one Include line, in OpenSSH's order: each
// glob in turn, its matches sorted.
func (l *configLoader) include(value, from string, depth int) ([]*configFile, error) {
	var out []*configFile
	for _, pat := range strings.Fields(value) {
		pat = strings.Trim(pat, `"`)
		switch {
		case strings.HasPrefix(pat, "~"):
			pat = expandTilde(pat, l.home)
		case filepath.IsAbs(pat):
		case strings.HasPrefix(from, "/etc/ssh/"):
			pat = filepath.Join("/etc/ssh", pat)
		default:
			pat = filepath.Join(l.home, ".ssh", pat)
		}
		matches, err := filepath.Glob(pat)
		if err != nil {
			return nil, fmt.Errorf("exec: ssh config %s: Include %q: %w", from, pat, err)
		}
		sort.Strings(matches)
		for _, m := range matches {
			if fi, err := os.Stat(m); err != nil || fi.IsDir() {
				continue
			}
			f, err := l.load(m, depth+1)
			if err != nil {
				return nil, err
			}
			if f != nil {
				out = append(out, f)
			}
		}
	}
	return out, nil
}

// rewrite turns Include lines into the private keyword and Match lines
// into placeholder Host lines, recording each Match's criteria.
func (l *configLoader) rewrite(data []byte, path string) []byte {
	lines := bytes.SplitAfter(data, []byte("\n"))
	var out bytes.Buffer
	out.Grow(len(data) + 64)
	for i, raw := range lines {
		line := string(raw)
		body := strings.TrimLeft(line, " \t")
		indent := line[:len(line)-len(body)]
		kw := keywordOf(body)
		switch strings.ToLower(kw) {
		case "include":
			out.WriteString(indent + includeKeyword + body[len(kw):])
			continue
		case "match":
			rest := strings.TrimLeft(body[len(kw):], " \t=")
			rule := parseMatch(rest)
			rule.file, rule.line = path, i+1
			if rule.never {
				l.logger.LogAttrs(context.Background(), slog.LevelWarn, "ssh config Match block ignored",
					slog.String("file", path), slog.Int("line", i+1),
					slog.String("match", strings.TrimSpace(rest)),
					slog.String("reason", "Match exec runs a local command; other criteria here are not evaluated"))
			}
			idx := len(l.sc.matches)
			l.sc.matches = append(l.sc.matches, rule)
			out.WriteString(indent + "Host " + matchPrefix + strconv.Itoa(idx) + "\n")
			continue
		}
		out.WriteString(line)
	}
	return out.Bytes()
}

// keywordOf returns the leading keyword of a config line.
func keywordOf(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return s[:i]
		}
	}
	return s
}

// parseMatch parses the criteria of a Match line.
func parseMatch(s string) matchRule {
	if i := strings.Index(s, "#"); i >= 0 {
		s = s[:i]
	}
	fields := splitConfigArgs(s)
	var r matchRule
	if len(fields) == 0 {
		r.never = true
		return r
	}
	for i := 0; i < len(fields); i++ {
		t := matchTerm{kind: strings.ToLower(fields[i])}
		if strings.HasPrefix(t.kind, "!") {
			t.negate, t.kind = true, t.kind[1:]
		}
		switch t.kind {
		case "all", "canonical", "final":
		case "host", "originalhost", "user", "localuser":
			if i+1 >= len(fields) {
				r.never = true
				return r
			}
			i++
			t.arg = fields[i]
		default:
			// exec, localnetwork, tagged, and anything newer: never match.
			r.never = true
			if i+1 < len(fields) {
				i++
			}
			continue
		}
		r.terms = append(r.terms, t)
	}
	return r
}

// splitConfigArgs splits on white space, honouring double quotes.
func splitConfigArgs(s string) []string {
	var out []string
	var cur strings.Builder
	in, have := false, false
	for _, r := range s {
		switch {
		case r == '"':
			in = !in
			have = true
		case !in && (r == ' ' || r == '\t' || r == '\r' || r == '\n'):
			if have {
				out = append(out, cur.String())
				cur.Reset()
				have = false
			}
		default:
			cur.WriteRune(r)
			have = true
		}
	}
	if have {
		out = append(out, cur.String())
	}
	return out
}

func matchIndex(h *ssh_config.Host) (int, bool) {
	if len(h.Patterns) != 1 {
		return 0, false
	}
	s, ok := strings.CutPrefix(h.Patterns[0].String(), matchPrefix)
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// sshSettings is the result of a lookup: the first value of each keyword.
type sshSettings struct {
	values        map[string]configValue
	identityFiles []configValue
}

type configValue struct {
	value string
	file  string
	line  int
}

func (s *sshSettings) get(key string) (string, bool) {
	v, ok := s.values[key]
	return v.value, ok
}

// lookup resolves the settings for alias. pre holds values that win over
// the files (the command line, in OpenSSH terms): lower-case keywords.
// localUser is the user running rigout, for Match localuser and as the
// default remote user in Match user.
func (sc *sshConfig) lookup(alias string, pre map[string]string, localUser string) *sshSettings {
	s := &sshSettings{values: map[string]configValue{}}
	for k, v := range pre {
		if k == "identityfile" {
			s.identityFiles = append(s.identityFiles, configValue{value: v})
			continue
		}
		s.values[k] = configValue{value: v}
	}
	w := walker{sc: sc, alias: alias, localUser: localUser, s: s}
	for _, f := range sc.files {
		w.walk(f)
	}
	return s
}

type walker struct {
	sc        *sshConfig
	alias     string
	localUser string
	s         *sshSettings
}

func (w *walker) walk(f *configFile) {
	for _, h := range f.cfg.Hosts {
		if !w.active(h) {
			continue
		}
		for _, n := range h.Nodes {
			kv, ok := n.(*ssh_config.KV)
			if !ok {
				continue
			}
			key := strings.ToLower(kv.Key)
			if key == strings.ToLower(includeKeyword) {
				for _, inc := range f.includes[kv] {
					w.walk(inc)
				}
				continue
			}
			w.set(key, kv.Value, f.path, kv.Pos().Line)
		}
	}
}

func (w *walker) active(h *ssh_config.Host) bool {
	if idx, ok := matchIndex(h); ok {
		if idx < 0 || idx >= len(w.sc.matches) {
			return false
		}
		return w.evalMatch(w.sc.matches[idx])
	}
	return hostMatches(h, w.alias)
}

// hostMatches applies a Host line's patterns as OpenSSH does: a matching
// negated pattern refuses the block whatever else matches; otherwise any
// matching pattern accepts it. ('?' is exactly one character; patterns are
// lower-cased, the host is not, as OpenSSH's match_hostname.)
func hostMatches(h *ssh_config.Host, alias string) bool {
	found := false
	for _, p := range h.Patterns {
		s := p.String()
		neg := strings.HasPrefix(s, "!")
		if neg {
			s = s[1:]
		}
		s = strings.Trim(s, `"`)
		if globMatch(strings.ToLower(s), alias) {
			if neg {
				return false
			}
			found = true
		}
	}
	return found
}

func (w *walker) evalMatch(r matchRule) bool {
	if r.never {
		return false
	}
	for _, t := range r.terms {
		var ok bool
		switch t.kind {
		case "all", "final":
			ok = true
		case "canonical":
			ok = false
		case "host":
			host := w.alias
			if v, found := w.s.get("hostname"); found {
				host = expandTokens(v, map[byte]string{'h': w.alias})
			}
			ok = matchPatternList(host, t.arg, true)
		case "originalhost":
			ok = matchPatternList(w.alias, t.arg, true)
		case "user":
			user := w.localUser
			if v, found := w.s.get("user"); found {
				user = v
			}
			ok = matchPatternList(user, t.arg, false)
		case "localuser":
			ok = matchPatternList(w.localUser, t.arg, false)
		}
		if t.negate {
			ok = !ok
		}
		if !ok {
			return false
		}
	}
	return true
}

func (w *walker) set(key, value, file string, line int) {
	switch key {
	case "identityfile":
		w.s.identityFiles = append(w.s.identityFiles, configValue{value, file, line})
		return
	case "proxyjump", "proxycommand":
		// Whichever of the two comes first prevents the other.
		if _, ok := w.s.values["proxyjump"]; ok {
			return
		}
		if _, ok := w.s.values["proxycommand"]; ok {
			return
		}
	}
	if _, ok := w.s.values[key]; ok {
		return
	}
	w.s.values[key] = configValue{value, file, line}
}

// matchPatternList matches s against a comma-separated pattern list with
// negations, as OpenSSH's match_pattern_list: a matching negated pattern
// refuses, otherwise any matching positive pattern accepts. lower
// lower-cases the patterns (not s), for host names.
func matchPatternList(s, list string, lower bool) bool {
	got := false
	for _, p := range strings.Split(list, ",") {
		neg := strings.HasPrefix(p, "!")
		if neg {
			p = p[1:]
		}
		if p == "" {
			continue
		}
		if lower {
			p = strings.ToLower(p)
		}
		if globMatch(p, s) {
			if neg {
				return false
			}
			got = true
		}
	}
	return got
}

// globMatch matches '*' and '?' wildcards, as OpenSSH's match_pattern.
func globMatch(p, s string) bool {
	// Iterative matcher with single-star backtracking.
	pi, si := 0, 0
	star, mark := -1, 0
	for si < len(s) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == s[si]):
			pi++
			si++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, si
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			si = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// expandTilde expands a leading ~ or ~/ with home.
func expandTilde(p, home string) string {
	if p == "~" {
		return home
	}
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		return filepath.Join(home, rest)
	}
	return p
}

// expandTokens replaces %x tokens from vals; %% is a percent sign. An
// unknown token is left as it is.
func expandTokens(s string, vals map[byte]string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		if s[i] == '%' {
			b.WriteByte('%')
			continue
		}
		if v, ok := vals[s[i]]; ok {
			b.WriteString(v)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(s[i])
	}
	return b.String()
}
