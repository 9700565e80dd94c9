package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/sqlite"
	"github.com/rigout/rigout/internal/runstate"
)

func TestTermText(t *testing.T) {
	tests := map[string]string{
		"execute_command":          "execute_command",
		"héllo wörld":              "héllo wörld",
		"\x1b[2Jclear":             `\x1b[2Jclear`,
		"\x1b]0;title\x07":         `\x1b]0;title\x07`,
		"line\nfake row":           `line\x0afake row`,
		"tab\there":                `tab\x09here`,
		"del\x7f":                  `del\x7f`,
		"c1 \u009b31m":             `c1 \u009b31m`,
		"bidi \u202egnp.exe":       `bidi \u202egnp.exe`,
		"bad \xff byte":            `bad \xff byte`,
		`literal \x1b stays apart`: `literal \\x1b stays apart`,
		`a \ b`:                    `a \ b`,
	}
	for in, want := range tests {
		if got := termText(in); got != want {
			t.Errorf("termText(%q) = %q, want %q", in, got, want)
		}
	}
	if got := termLine("a\tb\x1b"); got != "a\tb\\x1b" {
		t.Errorf("termLine keeps tabs: %q", got)
	}
}

// hostile is a tool name a client chose: clear screen, a fake red row, a
// window title.
const hostile = "x\x1b[2J\x1b[31mFAKE ROW\x1b[0m\n42\x1b]0;pwned\x07"

// TestCLIEscapesClientText puts a hostile tool name in the ledger and the
// activity log and checks that audit tail, audit stats, logs and status
// print no control character.
func TestCLIEscapesClientText(t *testing.T) {
	dir := t.TempDir()
	l, err := sqlite.Open(context.Background(), sqlite.Config{Path: filepath.Join(dir, "audit.db")})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Record(context.Background(), audit.Event{Type: audit.TypeToolDenied, Principal: "p\x1b[1m", Tool: hostile,
		Host: "h\x07", Status: audit.StatusUnknown, Error: "unknown tool \x1b[2J"}); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, runstate.LogFile), []byte("level=WARN msg=\"unknown tool\" tool="+hostile+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	clean := func(name, out string) {
		t.Helper()
		if i := strings.IndexFunc(out, func(r rune) bool { return r == 0x1b || r == 0x07 }); i >= 0 {
			t.Errorf("%s printed a control character at %d: %q", name, i, out)
		}
		if !strings.Contains(out, `\x1b[2J`) {
			t.Errorf("%s does not show the escaped sequence: %q", name, out)
		}
	}
	for _, args := range [][]string{{"tail", "--state-dir", dir}, {"stats", "--state-dir", dir}} {
		code, out, errOut := runAuditT(t, args...)
		if code != 0 {
			t.Fatalf("audit %v: %d %s", args, code, errOut)
		}
		clean("audit "+args[0], out)
		if strings.Count(out, "\n") > 3 {
			t.Errorf("audit %s: a newline in a tool name made a row: %q", args[0], out)
		}
	}
	var out, errb strings.Builder
	if code := runLogs(context.Background(), []string{"--state-dir", dir}, &out, &errb); code != 0 {
		t.Fatalf("logs: %d %s", code, errb.String())
	}
	clean("logs", out.String())
	var sb strings.Builder
	printStatus(&sb, statusReport{State: "running", URL: "http://127.0.0.1:1/mcp", Hosts: []string{hostile}, Token: "default"}, dir)
	clean("status", sb.String())
}
