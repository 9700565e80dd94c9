package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rigout/rigout/validate"
)

func TestRunCheck(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		code     int
		out, err string // substrings expected in stdout and stderr
	}{
		{"allowed", []string{"ls -la"}, 0, "allowed", ""},
		{"read-only shown", []string{"git status"}, 0, "allowed (read-only)", ""},
		{"refused", []string{"rm -rf /"}, 1, "refused: recursive-delete-root", ""},
		{"reason and hint", []string{"rm -rf /"}, 1, "hint: ", ""},
		{"sudo refused", []string{"sudo ls"}, 1, "refused: sudo", ""},
		{"sudo allowed", []string{"--allow-sudo", "sudo ls"}, 0, "allowed", ""},
		{"flag after command", []string{"sudo ls", "--allow-sudo"}, 0, "allowed", ""},
		{"allow mode refuses", []string{"--mode", "allow", "--allow", "git", "ls"}, 1, "refused: not-allowlisted", ""},
		{"allow mode allows", []string{"--mode=allow", "--allow", "git,ls", "ls | git status"}, 0, "allowed", ""},
		{"allow repeated", []string{"--mode=allow", "--allow", "git", "--allow", "ls", "ls"}, 0, "allowed", ""},
		{"confirm", []string{"--rule", "power-state=confirm", "reboot"}, 1, "needs confirmation: power-state", ""},
		{"rule off", []string{"--rule", "power-state=off", "reboot"}, 0, "allowed", ""},
		{"dir", []string{"--dir", "/", "rm -rf ."}, 1, "recursive-delete-root", ""},
		{"argv", []string{"--argv", "--", "rm", "-rf", "/"}, 1, "recursive-delete-root", ""},
		{"argv glob is literal", []string{"--argv", "rm", "-rf", "/*"}, 0, "allowed", ""},
		{"parse error", []string{"echo 'x"}, 1, "refused: parse-error", ""},
		{"list rules", []string{"--rules"}, 0, "recursive-delete-root", ""},
		{"list new rules", []string{"--rules"}, 0, "account-tamper", ""},
		{"list sysfs rule", []string{"--rules"}, 0, "sysfs-write", ""},
		{"list environment rule", []string{"--rules"}, 0, "environment", ""},
		{"account tamper", []string{"userdel root"}, 1, "refused: account-tamper", ""},
		{"empty command", []string{""}, 0, "allowed", ""},
		{"missing command", nil, 2, "", "missing the command"},
		{"two commands", []string{"rm", "-rf"}, 2, "", "quote the command"},
		{"bad mode", []string{"--mode", "maybe", "ls"}, 2, "", "unknown mode"},
		{"bad rule action", []string{"--rule", "sudo=perhaps", "ls"}, 2, "", "unknown action"},
		{"unknown rule", []string{"--rule", "no-such-rule=off", "ls"}, 2, "", "unknown rule"},
		{"relative dir", []string{"--dir", "tmp", "ls"}, 2, "", "not an absolute path"},
		{"unknown flag", []string{"--frobnicate", "ls"}, 2, "", "flag provided but not defined"},
		{"argv empty", []string{"--argv"}, 2, "", "--argv needs a program"},
		{"help", []string{"-h"}, 0, "", "usage: rigout check"},
		{"cmd format", []string{"--shell", "cmd", "format c:"}, 1, "refused: disk-format", ""},
		{"cmd del root", []string{"--shell", "cmd", `del /s /q C:\Windows\*`}, 1, "refused: recursive-delete-root", ""},
		{"cmd rmdir root", []string{"--shell=cmd", `rmdir /s /q C:\`}, 1, "refused: recursive-delete-root", ""},
		{"cmd near miss", []string{"--shell", "cmd", `rmdir /s /q build`}, 0, "allowed", ""},
		{"cmd relative in a root", []string{"--shell", "cmd", "--dir", `C:\`, `rmdir /s /q .`}, 1, "refused: recursive-delete-root", ""},
		{"cmd rule confirm", []string{"--shell", "cmd", "--rule", "disk-format=confirm", "format c:"}, 1, "needs confirmation: disk-format", ""},
		{"powershell", []string{"--shell", "powershell", `Remove-Item -Recurse -Force C:\Users`}, 1, "refused: recursive-delete-root", ""},
		{"posix does not judge cmd", []string{"format c:"}, 0, "allowed", ""},
		{"windows rules listed", []string{"--rules"}, 0, "registry-delete", ""},
		{"bad shell", []string{"--shell", "fish", "ls"}, 2, "", "unknown shell dialect"},
		{"windows dir needs a windows shell", []string{"--dir", `C:\`, "ls"}, 2, "", "not an absolute path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := runCheck(tt.args, &stdout, &stderr)
			if code != tt.code {
				t.Errorf("runCheck(%q) = %d; want %d\nstdout: %s\nstderr: %s", tt.args, code, tt.code, stdout.String(), stderr.String())
			}
			if !strings.Contains(stdout.String(), tt.out) {
				t.Errorf("stdout %q lacks %q", stdout.String(), tt.out)
			}
			if !strings.Contains(stderr.String(), tt.err) {
				t.Errorf("stderr %q lacks %q", stderr.String(), tt.err)
			}
		})
	}
}

func TestRunCheckJSON(t *testing.T) {
	for _, tt := range []struct {
		cmd  string
		code int
		want validate.Decision
	}{
		{"ls", 0, validate.Decision{Allowed: true, ReadOnly: true}},
		{"ls > out", 0, validate.Decision{Allowed: true}},
		{"mkfs.ext4 /dev/sda1", 1, validate.Decision{Rule: "disk-format"}},
	} {
		var stdout, stderr bytes.Buffer
		if code := runCheck([]string{"--json", tt.cmd}, &stdout, &stderr); code != tt.code {
			t.Fatalf("runCheck(--json %q) = %d; want %d (stderr %s)", tt.cmd, code, tt.code, stderr.String())
		}
		var got validate.Decision
		if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
			t.Fatalf("output %q is not JSON: %v", stdout.String(), err)
		}
		if got.Allowed != tt.want.Allowed || got.Rule != tt.want.Rule || got.ReadOnly != tt.want.ReadOnly {
			t.Errorf("runCheck(--json %q) = %+v; want %+v", tt.cmd, got, tt.want)
		}
		if !got.Allowed && (got.Reason == "" || got.Hint == "") {
			t.Errorf("runCheck(--json %q) lacks reason or hint: %+v", tt.cmd, got)
		}
		if !strings.Contains(stdout.String(), `"read_only":`) {
			t.Errorf("JSON output lacks the read-only classification: %q", stdout.String())
		}
		if strings.Count(stdout.String(), "\n") != 1 {
			t.Errorf("JSON output is not one line: %q", stdout.String())
		}
	}
}

// TestRunCheckConfig checks that --config judges with the configuration
// file's policy, protected roots included, and that flags given beside it
// override it.
func TestRunCheckConfig(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "precious")
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	roots := write("roots.json", `{"policy": {"protected_roots_replace": ["/", `+strconv.Quote(root)+`]}}`)
	allowGit := write("allow.json", `{"policy": {"mode": "allow", "allow": ["git"], "rules": {"power-state": "confirm"}}}`)
	empty := write("empty.json", `{}`)
	bad := write("bad.json", `{"policy": {"rules": {"no-such-rule": "off"}}}`)
	script := write("script.sh", "rm -rf /etc\n")
	tests := []struct {
		name     string
		args     []string
		code     int
		out, err string
	}{
		{"configured root refused", []string{"--config", roots, "rm -rf " + root}, 1, "refused: recursive-delete-root", ""},
		{"configured root without config", []string{"rm -rf " + root}, 0, "allowed", ""},
		{"configured roots replace defaults", []string{"--config", roots, "rm -rf /etc"}, 0, "allowed", ""},
		{"allow mode from config", []string{"--config", allowGit, "ls"}, 1, "refused: not-allowlisted", ""},
		{"allow mode lists git", []string{"--config", allowGit, "git status"}, 0, "allowed", ""},
		{"git cannot run what is not listed", []string{"--config", allowGit, "git -c core.pager=ls log"}, 1, "refused: not-allowlisted", ""},
		{"rule from config", []string{"--config", allowGit, "--allow", "reboot", "reboot"}, 1, "needs confirmation: power-state", ""},
		{"flag overrides config", []string{"--config", allowGit, "--mode", "deny", "ls"}, 0, "allowed", ""},
		{"rule flag merges", []string{"--config", allowGit, "--allow", "reboot", "--rule", "power-state=off", "reboot"}, 0, "allowed", ""},
		{"no policy section is the default", []string{"--config", empty, "rm -rf /"}, 1, "refused: recursive-delete-root", ""},
		{"bad policy", []string{"--config", bad, "ls"}, 2, "", "no-such-rule"},
		{"missing file", []string{"--config", filepath.Join(dir, "nope.json"), "ls"}, 2, "", "config"},
		{"stdin judged as code", []string{"--stdin", script, "bash -s"}, 1, "refused: recursive-delete-root", ""},
		{"stdin is data", []string{"--stdin", script, "cat"}, 0, "allowed", ""},
		{"stdin missing", []string{"--stdin", filepath.Join(dir, "nope"), "cat"}, 2, "", "--stdin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := runCheck(tt.args, &stdout, &stderr)
			if code != tt.code {
				t.Errorf("runCheck(%q) = %d; want %d\nstdout: %s\nstderr: %s", tt.args, code, tt.code, stdout.String(), stderr.String())
			}
			if !strings.Contains(stdout.String(), tt.out) {
				t.Errorf("stdout %q lacks %q", stdout.String(), tt.out)
			}
			if !strings.Contains(stderr.String(), tt.err) {
				t.Errorf("stderr %q lacks %q", stderr.String(), tt.err)
			}
		})
	}
}
