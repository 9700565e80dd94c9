package remote_test

import (
	"os/exec"
	"testing"

	rexec "github.com/rigout/rigout/exec"
)

// TestShellProbeRealShells runs the probe in the POSIX shells on this
// machine and reads their answers, and reads cmd.exe's and PowerShell's
// answers (cmd.exe's is also produced by Wine in TestCmdUnderWine).
func TestShellProbeRealShells(t *testing.T) {
	ran := 0
	for _, sh := range []string{"sh", "bash", "dash", "zsh", "busybox"} {
		path, err := exec.LookPath(sh)
		if err != nil {
			continue
		}
		args := []string{"-c", rexec.ShellProbe}
		if sh == "busybox" {
			args = append([]string{"sh"}, args...)
		}
		out, err := exec.Command(path, args...).Output()
		if err != nil {
			t.Fatalf("%s: %v", sh, err)
		}
		got, ok := rexec.ParseShellProbe(string(out))
		if !ok || got != rexec.ShellPOSIX {
			t.Errorf("%s answered %q: read as %q, %v; want posix", sh, out, got, ok)
		}
		ran++
	}
	if ran < 2 {
		t.Fatalf("only %d POSIX shells found", ran)
	}
	tests := []struct {
		out  string
		want rexec.Shell
	}{
		{"rigout-shell:Windows_NT:$?\r\n", rexec.ShellCmd},
		{"rigout-shell:%OS%:True\r\n", rexec.ShellPowerShell},
		{"rigout-shell:%OS%:False\r\n", rexec.ShellPowerShell},
		{"Microsoft Windows banner\r\nrigout-shell:%OS%:0\r\n", rexec.ShellPOSIX},
		{"rigout-shell:%OS%:\n", ""},
		{"rigout-shell:Windows_NT:0\n", ""},
		{"", ""},
		{"echo rigout-shell:%OS%:$?\n", ""},
	}
	for _, tt := range tests {
		got, ok := rexec.ParseShellProbe(tt.out)
		if ok != (tt.want != "") || got != tt.want {
			t.Errorf("ParseShellProbe(%q) = %q, %v; want %q", tt.out, got, ok, tt.want)
		}
	}
}
