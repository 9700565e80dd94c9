package exec_test

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rigout/rigout/exec"
)

var updateSeatbelt = flag.Bool("update-seatbelt", false, "rewrite exec/testdata/seatbelt/*.sb from exec.SeatbeltProfile")

// seatbeltCases are the golden profiles: testdata/seatbelt/NAME.sb.
var seatbeltCases = []struct {
	name string
	p    exec.SeatbeltPolicy
}{
	{"empty", exec.SeatbeltPolicy{}},
	{"gateway", exec.SeatbeltPolicy{
		Sandbox: exec.SandboxConfig{
			Protected: []string{"/Users/ana/projects", "/Users/ana"},
			Critical:  []string{"/etc/hosts", "/Users/ana/.zshrc"},
			Sealed:    []string{"/usr/local/bin"},
			Hidden:    []string{"/Users/ana/Library/Application Support/rigout", "/Users/ana/.ssh/id_ed25519"},
			ReadOnly:  []string{"/System", "/usr"},
		},
		Writable: []string{"/Users/ana/projects", "/private/tmp", "/Users/ana/projects/"},
	}},
	{"network", exec.SeatbeltPolicy{Writable: []string{"/private/var/folders/xy/T"}, Network: true}},
	{"principal", exec.SeatbeltPolicy{
		Sandbox: exec.SandboxConfig{
			Protected: []string{"/Users/ana"},
			Hidden:    []string{"/Users/ana/Library/Application Support/rigout"},
			ReadOnly:  []string{"/Users/ana/projects/site/.git"},
		},
		Writable: []string{"/Users/ana/projects/site", "/Users/ana/Library/Application Support/rigout/tmp/seatbelt-1f2e"},
		Private:  []string{"/Users/ana/Library/Application Support/rigout/tmp/seatbelt-1f2e"},
	}},
	{"odd-paths", exec.SeatbeltPolicy{
		Sandbox:  exec.SandboxConfig{Hidden: []string{`/Users/a"b/state`}, Protected: []string{`/srv/data.v2 (old)`, "/"}},
		Writable: []string{`/srv/back\slash`},
	}},
}

// TestSeatbeltGolden compares each profile with its golden file
// (go test ./exec -run Seatbelt -update-seatbelt rewrites them) and checks
// its syntax.
func TestSeatbeltGolden(t *testing.T) {
	for _, tc := range seatbeltCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := exec.SeatbeltProfile(tc.p)
			if err != nil {
				t.Fatal(err)
			}
			if err := checkSeatbelt(got); err != nil {
				t.Errorf("syntax: %v\n%s", err, got)
			}
			path := filepath.Join("testdata", "seatbelt", tc.name+".sb")
			if *updateSeatbelt {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update-seatbelt to create it)", err)
			}
			if got != string(want) {
				t.Errorf("profile differs from %s (rerun with -update-seatbelt after checking the change):\n%s", path, got)
			}
		})
	}
}

// TestSeatbeltSemantics checks what the golden files are trusted for: each
// input path lands in the rule that enforces it, and the order of rules
// makes the denials win (Seatbelt: the last matching rule decides).
func TestSeatbeltSemantics(t *testing.T) {
	p := seatbeltCases[1].p
	got, err := exec.SeatbeltProfile(p)
	if err != nil {
		t.Fatal(err)
	}
	forms := topForms(t, got)
	index := func(prefix, arg string) int {
		for i, f := range forms {
			if strings.HasPrefix(f, prefix) && strings.Contains(f, arg) {
				return i
			}
		}
		return -1
	}
	for _, tc := range []struct {
		rule, arg string
	}{
		{"(allow file-write*", `(subpath "/Users/ana/projects")`},
		{"(allow file-write*", `(subpath "/private/tmp")`},
		{"(deny file-write*", `(subpath "/System")`},
		{"(deny file-write*", `(literal "/etc/hosts")`},
		{"(deny file-write*", `(regex #"^/usr/local/bin/[^/]+$")`},
		{"(deny file-write-unlink", `(literal "/Users/ana/projects")`},
		{"(deny file-write-unlink", `(regex #"^/Users/ana/projects/[^/]+$")`},
		{"(deny file-read* file-write*", `(subpath "/Users/ana/Library/Application Support/rigout")`},
		{"(deny file-read* file-write*", `(subpath "/Users/ana/.ssh/id_ed25519")`},
		{"(deny file-write-unlink", `(literal "/Users/ana/Library/Application Support")`},
		{"(allow network-outbound", `(remote unix-socket)`},
	} {
		if index(tc.rule, tc.arg) < 0 {
			t.Errorf("no %s ... %s ...) in the profile", tc.rule, tc.arg)
		}
	}
	allowWrite := index("(allow file-write*", "/Users/ana/projects")
	for _, deny := range []string{"(deny file-write*", "(deny file-write-unlink", "(deny file-read* file-write*"} {
		if i := index(deny, "/"); i < allowWrite {
			t.Errorf("%s...) comes before the writable roots' allow (form %d < %d): the allow would win", deny, i, allowWrite)
		}
	}
	if strings.Contains(got, "(allow network*)") {
		t.Error("network allowed without Network")
	}
	if strings.Count(got, `(subpath "/Users/ana/projects")`) != 1 {
		t.Error("a writable root given twice (once with a trailing slash) is listed twice")
	}
}

func TestSeatbeltRefusesBadPaths(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    exec.SeatbeltPolicy
		want string
	}{
		{"relative writable", exec.SeatbeltPolicy{Writable: []string{"work"}}, `Writable: "work" is not absolute`},
		{"empty hidden", exec.SeatbeltPolicy{Sandbox: exec.SandboxConfig{Hidden: []string{""}}}, "Hidden: empty path"},
		{"newline", exec.SeatbeltPolicy{Sandbox: exec.SandboxConfig{Critical: []string{"/etc/x\n(allow default)"}}}, "Critical"},
		{"NUL", exec.SeatbeltPolicy{Sandbox: exec.SandboxConfig{ReadOnly: []string{"/a\x00"}}}, "ReadOnly"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := exec.SeatbeltProfile(tc.p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("SeatbeltProfile = %v, %q; want an error naming %q", err, got, tc.want)
			}
		})
	}
}

// TestSeatbeltCheckerCatches: the syntax check fails on what it must.
func TestSeatbeltCheckerCatches(t *testing.T) {
	for _, bad := range []string{
		"(version 1)\n(deny default",
		"(version 1)\n(deny default))",
		"(version 1)\n(allow file-wirte*)",
		`(version 1)(allow file-read* (literal "/a))`,
		`(version 1)(allow file-read* (subpaht "/a"))`,
		`(version 1)(allow file-read* (regex #"^/a[$"))`,
		`(deny default)`,
	} {
		if err := checkSeatbelt(bad); err == nil {
			t.Errorf("checkSeatbelt accepted %q", bad)
		}
	}
}

// seatbeltOps are the operations the generator may use, as Apple's
// profiles in /System/Library/Sandbox/Profiles and sandbox-exec(1)
// examples spell them.
var seatbeltOps = map[string]bool{
	"default": true, "file-read*": true, "file-read-metadata": true, "file-write*": true,
	"file-write-data": true, "file-write-unlink": true, "file-ioctl": true,
	"process-exec": true, "process-fork": true, "process-info*": true, "signal": true,
	"sysctl-read": true, "mach-lookup": true, "ipc-posix-shm-read-data": true,
	"ipc-posix-shm-read-metadata": true, "iokit-open": true, "pseudo-tty": true,
	"network*": true, "network-outbound": true, "network-inbound": true, "network-bind": true,
}

// seatbeltFilters are the filters it may use, with the arguments each takes.
var seatbeltFilters = map[string]func(arg sexp) error{
	"literal": wantString, "subpath": wantString,
	"regex": func(a sexp) error {
		if a.kind != regexAtom {
			return fmt.Errorf("regex wants #\"...\", got %q", a.text)
		}
		_, err := regexp.Compile(a.text)
		return err
	},
	"target": wantSymbol("same-sandbox", "self", "children"),
	"remote": wantSymbol("unix-socket"),
	"local":  wantSymbol("unix-socket"),
}

func wantString(a sexp) error {
	if a.kind != stringAtom || !strings.HasPrefix(a.text, "/") {
		return fmt.Errorf("want an absolute path string, got %q", a.text)
	}
	return nil
}

func wantSymbol(ok ...string) func(sexp) error {
	return func(a sexp) error {
		for _, s := range ok {
			if a.kind == symbolAtom && a.text == s {
				return nil
			}
		}
		return fmt.Errorf("want one of %v, got %q", ok, a.text)
	}
}

// checkSeatbelt parses a profile and checks it: balanced forms, strings
// and regexes closed, (version 1) first, then allow and deny forms of
// known operations and filters only.
func checkSeatbelt(profile string) error {
	forms, err := parseSexps(profile)
	if err != nil {
		return err
	}
	if len(forms) == 0 || forms[0].String() != "(version 1)" {
		return errors.New("the profile does not start with (version 1)")
	}
	for _, f := range forms[1:] {
		if f.kind != listForm || len(f.list) < 2 || (f.list[0].text != "allow" && f.list[0].text != "deny") {
			return fmt.Errorf("not an allow or deny form: %s", f)
		}
		ops := 0
		for _, x := range f.list[1:] {
			if x.kind == symbolAtom {
				if !seatbeltOps[x.text] {
					return fmt.Errorf("unknown operation %q in %s", x.text, f)
				}
				if ops++; len(f.list) > 2 && x.text == "default" {
					return fmt.Errorf("default with filters: %s", f)
				}
				continue
			}
			if x.kind != listForm || len(x.list) != 2 || x.list[0].kind != symbolAtom {
				return fmt.Errorf("not a filter: %s", x)
			}
			check, ok := seatbeltFilters[x.list[0].text]
			if !ok {
				return fmt.Errorf("unknown filter %q in %s", x.list[0].text, f)
			}
			if err := check(x.list[1]); err != nil {
				return fmt.Errorf("%s: %v", x, err)
			}
		}
		if ops == 0 {
			return fmt.Errorf("no operation: %s", f)
		}
	}
	return nil
}

type sexpKind int

const (
	listForm sexpKind = iota
	symbolAtom
	stringAtom
	regexAtom
)

type sexp struct {
	kind sexpKind
	text string // atoms: unescaped
	list []sexp
}

func (s sexp) String() string {
	switch s.kind {
	case listForm:
		parts := make([]string, len(s.list))
		for i, x := range s.list {
			parts[i] = x.String()
		}
		return "(" + strings.Join(parts, " ") + ")"
	case stringAtom:
		return fmt.Sprintf("%q", s.text)
	case regexAtom:
		return "#" + fmt.Sprintf("%q", s.text)
	}
	return s.text
}

// parseSexps reads TinyScheme-style forms: lists, symbols, "strings" and
// #"regexes" with \-escapes, and ; comments to the end of the line.
func parseSexps(src string) ([]sexp, error) {
	var stack [][]sexp
	var top []sexp
	emit := func(x sexp) {
		if len(stack) == 0 {
			top = append(top, x)
		} else {
			stack[len(stack)-1] = append(stack[len(stack)-1], x)
		}
	}
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ';':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == ' ' || c == '\n' || c == '\t':
			i++
		case c == '(':
			stack = append(stack, nil)
			i++
		case c == ')':
			if len(stack) == 0 {
				return nil, fmt.Errorf("unbalanced ')' at byte %d", i)
			}
			l := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			emit(sexp{kind: listForm, list: l})
			i++
		case c == '"' || (c == '#' && i+1 < len(src) && src[i+1] == '"'):
			kind := stringAtom
			if c == '#' {
				kind, i = regexAtom, i+1
			}
			var b strings.Builder
			j := i + 1
			for ; j < len(src) && src[j] != '"'; j++ {
				if src[j] == '\\' && j+1 < len(src) && (src[j+1] == '"' || (kind == stringAtom && src[j+1] == '\\')) {
					j++
				}
				b.WriteByte(src[j])
			}
			if j >= len(src) {
				return nil, fmt.Errorf("unterminated string at byte %d", i)
			}
			emit(sexp{kind: kind, text: b.String()})
			i = j + 1
		default:
			j := i
			for j < len(src) && !strings.ContainsRune(" \n\t()\";", rune(src[j])) {
				j++
			}
			emit(sexp{kind: symbolAtom, text: src[i:j]})
			i = j
		}
	}
	if len(stack) != 0 {
		return nil, fmt.Errorf("%d unclosed '('", len(stack))
	}
	return top, nil
}

// topForms returns the profile's top-level forms as text, in order.
func topForms(t *testing.T, profile string) []string {
	t.Helper()
	forms, err := parseSexps(profile)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(forms))
	for i, f := range forms {
		out[i] = f.String()
	}
	return out
}

func TestSeatbeltArgv(t *testing.T) {
	got, err := exec.SeatbeltArgv("(version 1)", []string{"/bin/sh", "-c", "echo hi"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{exec.SeatbeltExec, "-p", "(version 1)", "/bin/sh", "-c", "echo hi"}; !slices.Equal(got, want) {
		t.Errorf("SeatbeltArgv = %q, want %q", got, want)
	}
	for _, bad := range []struct {
		profile string
		argv    []string
	}{{"", []string{"/bin/sh"}}, {"(version 1)", nil}, {"(version 1)", []string{""}}} {
		if _, err := exec.SeatbeltArgv(bad.profile, bad.argv); err == nil {
			t.Errorf("SeatbeltArgv(%q, %q) accepted", bad.profile, bad.argv)
		}
	}
}
