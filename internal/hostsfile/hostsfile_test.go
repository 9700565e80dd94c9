package hostsfile

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/rigout/rigout/config"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/exec/remote"
)

func TestMergeConfigWins(t *testing.T) {
	all, skipped := Merge(
		[]remote.HostConfig{{Name: "a", Address: "10.0.0.1"}},
		[]remote.HostConfig{{Name: "a", Address: "10.0.0.2"}, {Name: "b", Address: "10.0.0.3"}})
	if len(all) != 2 || all[0].Address != "10.0.0.1" || all[1].Name != "b" || len(skipped) != 1 || skipped[0] != "a" {
		t.Fatalf("Merge = %+v, skipped %v", all, skipped)
	}
}

func TestRouterReadsSavedHostsOnlyWhenOptedIn(t *testing.T) {
	dir := t.TempDir()
	if err := New(dir).Save(remote.HostConfig{Name: "saved", Address: "10.0.0.9"}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		persist bool
		want    []string
	}{
		{"opted in", true, []string{"conf", "saved"}},
		{"not opted in", false, []string{"conf"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &config.File{Hosts: []config.Host{{Name: "conf", Address: "10.0.0.1", Helper: "off", Shell: "cmd"}}}
			f.SSH.PersistHosts = tt.persist
			hosts, err := Router(f, dir, func(string, ...any) {})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, h := range hosts {
				names = append(names, h.Name)
			}
			if !slices.Equal(names, tt.want) {
				t.Errorf("hosts %v, want %v", names, tt.want)
			}
			if hosts[0].Shell != exec.ShellCmd {
				t.Errorf("shell %q, want cmd", hosts[0].Shell)
			}
			if hosts[0].Helper != remote.HelperOff {
				t.Errorf("helper %q, want off", hosts[0].Helper)
			}
		})
	}
	if got := New(dir).String(); got != filepath.Join(dir, Name) {
		t.Errorf("String() = %s", got)
	}
}
