package exec_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rigout/rigout/exec"
)

// standInSeatbelt writes a stand-in for sandbox-exec(1) that keeps each
// profile it is given in dir and runs the command, as the real one does
// once the profile is applied. It returns its path and a function that
// lists the profiles received so far, in order.
func standInSeatbelt(t *testing.T) (string, func() []string) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "sandbox-exec")
	script := `#!/bin/sh
[ "$1" = -p ] || { echo "stand-in sandbox-exec: want -p, got $1" >&2; exit 71; }
n=$(ls "` + dir + `"/profiles | wc -l)
printf '%s' "$2" > "` + dir + `/profiles/$n.sb"
shift 2
exec "$@"
`
	if err := os.Mkdir(filepath.Join(dir, "profiles"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	return path, func() []string {
		var out []string
		for i := 0; ; i++ {
			b, err := os.ReadFile(filepath.Join(dir, "profiles", strconv.Itoa(i)+".sb"))
			if err != nil {
				return out
			}
			out = append(out, string(b))
		}
	}
}

type principalKey struct{}

// TestSeatbeltWiring runs exec.Local's commands through the Seatbelt wiring that
// macOS uses, with a stand-in for sandbox-exec that records the profile and
// runs the command: every command goes through it, each principal gets the
// profile of its own writable trees, private TMPDIR and network switch, a
// path reached through a link is listed in both forms, and a new
// configuration gives new profiles. What the profile makes macOS enforce
// cannot be run here (see TestSeatbeltSemantics and the golden profiles).
func TestSeatbeltWiring(t *testing.T) {
	standIn, profiles := standInSeatbelt(t)
	base := t.TempDir()
	rootA := filepath.Join(base, "a")
	secret := filepath.Join(base, "secret")
	protected := filepath.Join(base, "protected")
	link := filepath.Join(base, "protected-link")
	for _, d := range []string{rootA, secret, protected} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(protected, link); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(secret, "tmp") // in the hidden state directory, as the binary keeps it
	views := &exec.ViewConfig{
		TmpDir:   tmp,
		Writable: []string{base},
		Principal: func(ctx context.Context) exec.Principal {
			p, _ := ctx.Value(principalKey{}).(exec.Principal)
			return p
		},
	}
	cfg := exec.SandboxConfig{Protected: []string{link}, Hidden: []string{secret}, Views: views}
	exec.SeatbeltWith(&cfg, standIn)
	sb, err := exec.NewSandbox(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	if st := sb.Status(); !st.Seatbelt || !st.Enforced || !strings.Contains(st.String(), "Seatbelt") {
		t.Fatalf("Status = %+v (%s), want Seatbelt enforced", st, st)
	}
	l := &exec.Local{Sandbox: sb}

	alice := exec.Principal{Name: "alice", Roots: []string{rootA}}
	bob := exec.Principal{Name: "bob", ReadOnly: true, Offline: true}
	run := func(p exec.Principal) exec.Result {
		t.Helper()
		ctx := context.WithValue(context.Background(), principalKey{}, p)
		res, err := l.Run(ctx, exec.Command{Shell: `printf '%s' "$TMPDIR"`})
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode != 0 || !res.Sandboxed || res.Unsandboxed != "" {
			t.Fatalf("Run = %+v, want a sandboxed success", res)
		}
		return res
	}
	resA := run(alice)
	resB := run(bob)
	run(alice) // the profile is reused
	got := profiles()
	if len(got) != 3 {
		t.Fatalf("sandbox-exec ran %d times, want 3 (every command under it)", len(got))
	}
	if got[0] != got[2] {
		t.Error("alice's two commands ran under different profiles")
	}
	for i, prof := range got {
		if err := checkSeatbelt(prof); err != nil {
			t.Errorf("profile %d: %v", i, err)
		}
	}
	pa, pb := got[0], got[1]

	tmpA, tmpB := string(resA.Stdout.Data), string(resB.Stdout.Data)
	if tmpA == tmpB || !strings.HasPrefix(tmpA, tmp+"/") || !strings.HasPrefix(tmpB, tmp+"/") {
		t.Fatalf("TMPDIR = %q and %q, want a private directory under %s each", tmpA, tmpB, tmp)
	}
	if fi, err := os.Stat(tmpA); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("alice's TMPDIR: %v %v, want an owner-only directory", fi, err)
	}
	writable := func(prof string) []string {
		_, block, _ := strings.Cut(prof, "(allow file-write*\n")
		block, _, _ = strings.Cut(block, "\n)\n")
		return strings.Fields(block)
	}
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"alice may change her root", slices.Contains(writable(pa), `"`+rootA+`")`)},
		{"alice may change her TMPDIR", slices.Contains(writable(pa), `"`+tmpA+`")`)},
		{"alice may not change the rest of the writable trees", !slices.Contains(writable(pa), `"`+base+`")`)},
		{"bob (read-only) may change his TMPDIR only", len(writable(pb)) == 2 && slices.Contains(writable(pb), `"`+tmpB+`")`)},
		{"alice has the network", strings.Contains(pa, "(allow network*)")},
		{"bob (offline) has no IP network", !strings.Contains(pb, "(allow network*)") && strings.Contains(pb, "Unix sockets only")},
		{"the hidden directory is denied", strings.Contains(pa, `(subpath "`+secret+`")`)},
		{"alice's TMPDIR is hers although it is in the hidden directory", strings.Index(pa, "(allow file-read* file-write*\n  (subpath \""+tmpA+"\")") > strings.Index(pa, "(deny file-read* file-write*")},
		{"the protected root by its link", strings.Contains(pa, `(literal "`+link+`")`)},
		{"the protected root by its target", strings.Contains(pa, `(literal "`+protected+`")`)},
	} {
		if !c.ok {
			t.Errorf("%s: not so in the profile", c.name)
		}
	}
	if t.Failed() {
		t.Logf("alice's profile:\n%s", pa)
	}

	// A new configuration makes new profiles.
	other := filepath.Join(base, "other-secret")
	if err := sb.SetConfig(exec.SandboxConfig{Protected: []string{link}, Hidden: []string{secret, other}}); err != nil {
		t.Fatal(err)
	}
	run(alice)
	if got := profiles(); len(got) != 4 || !strings.Contains(got[3], `"`+other+`"`) {
		t.Errorf("after SetConfig the profile does not hide %s", other)
	}
}

// TestSeatbeltWithoutViews: without views one profile serves every
// command, writable everywhere but what the configuration restricts, as
// the Landlock sandbox is.
func TestSeatbeltWithoutViews(t *testing.T) {
	standIn, profiles := standInSeatbelt(t)
	secret := t.TempDir()
	cfg := exec.SandboxConfig{Hidden: []string{secret}}
	exec.SeatbeltWith(&cfg, standIn)
	sb, err := exec.NewSandbox(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l := &exec.Local{Sandbox: sb}
	res, err := l.Run(context.Background(), exec.Command{Argv: []string{"echo", "hi"}})
	if err != nil || string(res.Stdout.Data) != "hi\n" || !res.Sandboxed {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	got := profiles()
	if len(got) != 1 || !strings.Contains(got[0], "(allow file-write*\n  (subpath \"/\")") || !strings.Contains(got[0], secret) {
		t.Fatalf("profiles = %q, want one writable at / hiding %s", got, secret)
	}
	if st := sb.Status(); !slices.ContainsFunc(st.Unenforced, func(s string) bool { return strings.Contains(s, "one profile for every principal") }) {
		t.Errorf("Status.Unenforced = %q, want it to say there is one profile for all", st.Unenforced)
	}
	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Run(context.Background(), exec.Command{Argv: []string{"true"}}); err == nil {
		t.Error("a command ran after the sandbox was closed")
	}
}
