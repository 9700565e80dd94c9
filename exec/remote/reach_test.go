package remote_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/exec/remote"
)

// TestReaches walks the routing ladder without connecting: configured
// names stay names, this machine is "local", and everything else is the
// canonical user@host:port it would dial, ad hoc.
func TestReaches(t *testing.T) {
	r, err := remote.NewRouter(remote.RouterConfig{
		HostKeyPolicy: remote.HostKeyStrict,
		HomeDir:       t.TempDir(),
		LocalUser:     "tester",
		Local:         &exec.Local{},
		Hosts: []remote.HostConfig{
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
		want       []remote.Reach
	}{
		{"local", "local", []remote.Reach{{Name: "local"}}},
		{"empty", "", []remote.Reach{{Name: "local"}}},
		{"a name of this machine", "localhost", []remote.Reach{{Name: "local"}}},
		{"configured", "web1", []remote.Reach{{Name: "web1"}}},
		{"configured with another user", "root@web1", []remote.Reach{{Name: "root@127.0.0.2:2222", AdHoc: true}}},
		{"configured with another port", "web1:22", []remote.Reach{{Name: "deploy@127.0.0.2:22", AdHoc: true}}},
		{"user at an address", "web@127.0.0.2:1", []remote.Reach{{Name: "web@127.0.0.2:1", AdHoc: true}}},
		{"this machine with a port", "127.0.0.1:22", []remote.Reach{{Name: "tester@127.0.0.1:22", AdHoc: true}}},
		{"unknown name", "Web9", []remote.Reach{{Name: "tester@web9:22", AdHoc: true}}},
		{"ipv6", "u@[::1]:2", []remote.Reach{{Name: "u@[::1]:2", AdHoc: true}}},
		{"auto", "auto", []remote.Reach{{Name: "web1"}, {Name: "db1"}, {Name: "local"}}},
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
	var se *remote.HostSpecError
	if _, err := r.Reaches("bad user@x"); !errors.As(err, &se) {
		t.Errorf("malformed host: err = %v, want a *HostSpecError", err)
	}
}
