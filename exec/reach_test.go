package exec_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/rigout/rigout/exec"
)

// TestReaches walks the routing ladder without connecting: configured
// names stay names, this machine is "local", and everything else is the
// canonical user@host:port it would dial, ad hoc.
func TestReaches(t *testing.T) {
	r, err := exec.NewRouter(exec.RouterConfig{
		HostKeyPolicy: exec.HostKeyStrict,
		HomeDir:       t.TempDir(),
		LocalUser:     "tester",
		Local:         &exec.Local{},
		Hosts: []exec.HostConfig{
			{Name: "web1", Address: "127.0.0.2", Port: 2222, User: "deploy"},
			{Name: "db1", Address: "127.0.0.3"},
		},
		AutoHosts: []string{"web1", "db1"},
		AutoLocal: true,
		IsLocal:   func(h string) bool { return h == "127.0.0.1" || h == "localhost" },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tests := []struct {
		name, host string
		want       []exec.Reach
	}{
		{"local", "local", []exec.Reach{{Name: "local"}}},
		{"empty", "", []exec.Reach{{Name: "local"}}},
		{"a name of this machine", "localhost", []exec.Reach{{Name: "local"}}},
		{"configured", "web1", []exec.Reach{{Name: "web1"}}},
		{"configured with another user", "root@web1", []exec.Reach{{Name: "root@127.0.0.2:2222", AdHoc: true}}},
		{"configured with another port", "web1:22", []exec.Reach{{Name: "deploy@127.0.0.2:22", AdHoc: true}}},
		{"user at an address", "web@127.0.0.2:1", []exec.Reach{{Name: "web@127.0.0.2:1", AdHoc: true}}},
		{"this machine with a port", "127.0.0.1:22", []exec.Reach{{Name: "tester@127.0.0.1:22", AdHoc: true}}},
		{"unknown name", "Web9", []exec.Reach{{Name: "tester@web9:22", AdHoc: true}}},
		{"ipv6", "u@[::1]:2", []exec.Reach{{Name: "u@[::1]:2", AdHoc: true}}},
		{"auto", "auto", []exec.Reach{{Name: "web1"}, {Name: "db1"}, {Name: "local"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := r.Reaches(tt.host)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Reaches(%q) = %+v, want %+v", tt.host, got, tt.want)
			}
		})
	}
	var se *exec.HostSpecError
	if _, err := r.Reaches("bad user@x"); !errors.As(err, &se) {
		t.Errorf("malformed host: err = %v, want a *HostSpecError", err)
	}
}
