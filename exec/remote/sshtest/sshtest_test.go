package sshtest_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"
	"golang.org/x/crypto/ssh"

	"github.com/rigout/rigout/exec/remote/sshtest"
)

// dial logs in to s with a fresh key, checking the server's host key.
func dial(t *testing.T, s *sshtest.Server) *ssh.Client {
	t.Helper()
	key, err := sshtest.NewKey("ed25519")
	if err != nil {
		t.Fatal(err)
	}
	c, err := ssh.Dial("tcp", s.Addr(), &ssh.ClientConfig{
		User:            "tester",
		Auth:            []ssh.AuthMethod{ssh.PublicKeys(key.Signer)},
		HostKeyCallback: ssh.FixedHostKey(s.HostKey()),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

type ran struct {
	stdout, stderr string
	code           int
}

// run runs command in a new session and returns what came back.
func run(t *testing.T, c *ssh.Client, command, stdin string) ran {
	t.Helper()
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	var out, errOut bytes.Buffer
	sess.Stdout, sess.Stderr = &out, &errOut
	if stdin != "" {
		sess.Stdin = strings.NewReader(stdin)
	}
	err = sess.Run(command)
	var ee *ssh.ExitError
	code := 0
	switch {
	case errors.As(err, &ee):
		code = ee.ExitStatus()
	case err != nil:
		t.Fatalf("run %q: %v", command, err)
	}
	return ran{out.String(), errOut.String(), code}
}

func TestRecordOnly(t *testing.T) {
	opt := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opt) })
	// The command creates a sentinel, prints and fails: a server that runs
	// it leaves all three traces; a recording one leaves none.
	sentinel := filepath.Join(t.TempDir(), "sentinel")
	command := "touch '" + sentinel + "'; echo out; echo err >&2; exit 3"
	tests := []struct {
		name       string
		recordOnly bool
		want       ran
		wantFile   bool
		wantCat    ran
	}{
		{"runs", false, ran{"out\n", "err\n", 3}, true, ran{"fed\n", "", 0}},
		{"records only", true, ran{}, false, ran{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(sentinel)
			s, err := sshtest.NewServer(sshtest.Config{RecordOnly: tt.recordOnly})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			c := dial(t, s)
			if got := run(t, c, command, ""); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			if _, err := os.Stat(sentinel); (err == nil) != tt.wantFile {
				t.Errorf("sentinel exists: %v, want %v", err == nil, tt.wantFile)
			}
			// Under RecordOnly stdin is read and dropped.
			if got := run(t, c, "cat", "fed\n"); got != tt.wantCat {
				t.Errorf("cat: got %+v, want %+v", got, tt.wantCat)
			}
			if want := []string{command, "cat"}; !slices.Equal(s.Commands(), want) || s.Execs() != 2 {
				t.Errorf("Commands() = %q, Execs() = %d; want %q", s.Commands(), s.Execs(), want)
			}
		})
	}
}
