package assembly

import (
	"os/exec"
	"testing"

	"github.com/rigout/rigout/internal/runstate"
)

// TestGatewayAlive: an unfinished call is left open only while the
// gateway that wrote it may still run: this process, or a live process of
// this boot with the recorded start time.
func TestGatewayAlive(t *testing.T) {
	self, err := runstate.Self()
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command("sleep", "30")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { child.Process.Kill(); child.Wait() })
	live, err := runstate.Of(child.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		id   runstate.Identity
		want bool
	}{
		{"this process", self, true},
		{"a live process", live, true},
		{"a reused PID", runstate.Identity{PID: live.PID, StartTime: live.StartTime + 1, BootID: live.BootID}, false},
		{"an exited process", runstate.Identity{PID: gone.Process.Pid, StartTime: live.StartTime, BootID: self.BootID}, false},
		{"an earlier boot", runstate.Identity{PID: self.PID, StartTime: self.StartTime, BootID: "another-boot"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := identityString(tt.id)
			id, ok := parseIdentity(s)
			if !ok || id != tt.id {
				t.Fatalf("parseIdentity(%q) = %+v, %v", s, id, ok)
			}
			if got := gatewayAlive(id, self); got != tt.want {
				t.Fatalf("gatewayAlive(%+v) = %v, want %v", id, got, tt.want)
			}
		})
	}
	for _, bad := range []string{"", "12", "x/1/b", "0/1/b", "12/-1/b"} {
		if _, ok := parseIdentity(bad); ok {
			t.Errorf("parseIdentity(%q) accepted", bad)
		}
	}
}
