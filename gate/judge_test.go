package gate_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rigout/rigout/gate"
	"github.com/rigout/rigout/validate"
)

// TestJudgeLinks: Judge resolves the paths a command deletes through the
// links of the machine it runs on: this one's for Local, a remote host's
// through Command.Readlink (here, the links of a temp dir standing in for
// the host). Nothing runs.
func TestJudgeLinks(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "precious")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	plink := filepath.Join(base, "plink")
	if err := os.Symlink(root, plink); err != nil {
		t.Fatal(err)
	}
	g, err := gate.New(gate.Config{Policy: &validate.Policy{ProtectedRoots: []string{"/", root}}})
	if err != nil {
		t.Fatal(err)
	}
	line := "rm -rf " + plink + "/"
	tests := []struct {
		name    string
		cmd     gate.Command
		allowed bool
	}{
		{"remote, links unknown", gate.Command{Host: "web1", Shell: line}, true},
		{"remote, links read on the host", gate.Command{Host: "web1", Shell: line, Readlink: os.Readlink}, false},
		{"local", gate.Command{Host: "local", Shell: line, Local: true}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := g.Judge(tt.cmd); d.Allowed != tt.allowed {
				t.Errorf("allowed %v (%s), want %v", d.Allowed, d.Reason, tt.allowed)
			}
		})
	}
}
