package exec_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rigout/rigout/exec"
)

// TestLocalHosts: without SSH, this machine's names lead to Local and
// every other host is a *LocalOnlyError naming it.
func TestLocalHosts(t *testing.T) {
	local := &exec.Local{UnsafeNoSandbox: true}
	h := exec.LocalHosts{Local: local}
	tests := []struct {
		host  string
		local bool
	}{
		{"", true}, {"local", true}, {"SELF", true}, {"localhost", true}, {"127.0.0.1", true}, {"::1", true},
		{"web1", false}, {"user@localhost", false}, {"127.0.0.2", false}, {"auto", false},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			tgt, err := h.Resolve(context.Background(), tt.host, "p")
			if tt.local {
				if err != nil || !tgt.Local || tgt.Runner != local || tgt.Route != "local" || tgt.Host != tt.host {
					t.Errorf("Resolve(%q) = %+v, %v, want this machine", tt.host, tgt, err)
				}
				return
			}
			var lo *exec.LocalOnlyError
			if !errors.As(err, &lo) || lo.Host != tt.host || !strings.Contains(err.Error(), "SSH hosts are not configured") {
				t.Errorf("Resolve(%q) = %+v, %v, want a *LocalOnlyError naming it", tt.host, tgt, err)
			}
		})
	}
	if err := (exec.LocalHosts{Local: &exec.Local{}}).CheckSandboxed(); !errors.Is(err, exec.ErrNoSandbox) {
		t.Errorf("CheckSandboxed of an unconfined Local = %v, want ErrNoSandbox", err)
	}
	if err := h.CheckSandboxed(); err != nil {
		t.Errorf("CheckSandboxed of an unsafe Local = %v", err)
	}
	var hosts exec.Hosts = h
	if _, ok := hosts.(exec.FanOuter); ok {
		t.Error("LocalHosts claims to fan out")
	}
}
