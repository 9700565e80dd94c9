package exec_test

import (
	"bytes"
	"context"
	"io"
	osexec "os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/redact"
)

// tricky is a secret value with every character the remote quoting must
// carry: quotes, a newline, $, backslash, spaces.
const tricky = "it's a \"secret\"\n$HOME `x` \\ end"

// TestRemoteCommandLineSecrets: the command line names the variables'
// reader, never a value; run by a real sh and bash with the secrets line on
// standard input, the command sees each value exactly, and the stdin that
// follows is untouched.
func TestRemoteCommandLineSecrets(t *testing.T) {
	cmd := exec.Command{
		Shell:   `printf '%s|%s|' "$TRICKY" "$PLAIN"; cat`,
		Env:     map[string]string{"PLAIN": "public", "TRICKY": "env-loses"},
		Secrets: map[string]string{"TRICKY": tricky},
	}
	line, err := exec.RemoteCommandLine(cmd, "sh")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(line, "secret") || strings.Contains(line, "env-loses") {
		t.Fatalf("the command line holds a value: %q", line)
	}
	for _, sh := range []string{"sh", "bash"} {
		if _, err := osexec.LookPath(sh); err != nil {
			t.Fatalf("%s not installed: %v", sh, err)
		}
		c := osexec.Command(sh, "-c", line)
		c.Stdin = io.MultiReader(strings.NewReader(exec.SecretsLine(cmd.Secrets)), strings.NewReader("stdin follows"))
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v: %s", sh, err, out)
		}
		if want := tricky + "|public|stdin follows"; string(out) != want {
			t.Fatalf("%s: got %q, want %q", sh, out, want)
		}
	}
}

// TestLocalSecretsAndScrub: a secret reaches the local child's
// environment, and every way of printing it back comes out masked,
// including a value split across the pipe's reads.
func TestLocalSecretsAndScrub(t *testing.T) {
	const value = "sk-local-0123456789abcdef"
	set, err := redact.New(value)
	if err != nil {
		t.Fatal(err)
	}
	scrub := func(w io.Writer) io.WriteCloser { return set.Scrubber(w) }
	var mu sync.Mutex
	var seen bytes.Buffer
	cmd := exec.Command{
		Shell: `env; printenv API_KEY; cat /proc/self/environ | tr '\0' '\n'; echo "$API_KEY" | base64; ` +
			`printf %s "$API_KEY" | od -An -tx1 | tr -d ' \n'; echo; ` +
			`[ "$API_KEY" = ` + value + ` ] && echo MATCH; ` +
			// half the value, a pause, the rest: two reads.
			`printf '%s' "${API_KEY%????????????}"; sleep 0.2; printf '%s\n' "${API_KEY#sk-local-0123}"; echo "$API_KEY" >&2`,
		Secrets:  map[string]string{"API_KEY": value},
		Env:      map[string]string{"API_KEY": "overridden"},
		Scrub:    scrub,
		OnOutput: func(_ exec.Stream, p []byte) { mu.Lock(); seen.Write(p); mu.Unlock() },
	}
	res, err := (&exec.Local{}).Run(context.Background(), cmd)
	if err != nil {
		t.Fatal(err)
	}
	out := string(res.Stdout.Data)
	if !strings.Contains(out, "MATCH") {
		t.Fatalf("the child did not get the value: %s", out)
	}
	for _, text := range []string{out, string(res.Stderr.Data), seen.String()} {
		if strings.Contains(text, value) || strings.Contains(text, "0123456789abcdef") || strings.Contains(text, "c2stbG9jYWwt") {
			t.Fatalf("a form of the value got through:\n%s", text)
		}
	}
	if n := strings.Count(out, "API_KEY=***"); n < 2 {
		t.Fatalf("env and /proc/self/environ should show API_KEY=***, %d did:\n%s", n, out)
	}
	if strings.TrimSpace(string(res.Stderr.Data)) != redact.Mask {
		t.Fatalf("stderr = %q", res.Stderr.Data)
	}
}
