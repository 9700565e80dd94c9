// Package hostsfile keeps the SSH hosts added while a gateway runs
// (manage_hosts, rigout hosts add) in <state dir>/hosts.json, when the
// configuration opts in with "ssh": {"persist_hosts": true}; the
// assembly (package assembly) and rigout's hosts commands share it.
package hostsfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/rigout/rigout/config"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/exec/remote"
	"github.com/rigout/rigout/internal/atomicfile"
	hostsfamily "github.com/rigout/rigout/tools/hosts"
)

// Name is the file in the state directory that keeps the hosts
// added through manage_hosts or `rigout hosts add`, when the configuration
// opts in with "ssh": {"persist_hosts": true}.
const Name = "hosts.json"

// File is a hosts family Store on <state dir>/hosts.json: owner-only,
// rewritten atomically on every change. It is safe for concurrent use.
type File struct {
	path string
	mu   sync.Mutex
}

type hostsDoc struct {
	Hosts []remote.HostConfig `json:"hosts"`
}

// New returns the hosts file of the state directory dir.
func New(dir string) *File { return &File{path: filepath.Join(dir, Name)} }

// String is the file's path.
func (f *File) String() string { return f.path }

// Load returns the saved hosts; a missing file holds none.
func (f *File) Load() ([]remote.HostConfig, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.loadLocked()
}

func (f *File) loadLocked() ([]remote.HostConfig, error) {
	b, err := os.ReadFile(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("hosts file: %w", err)
	}
	var d hostsDoc
	if err := config.Unmarshal(f.path, b, &d); err != nil {
		return nil, err
	}
	for i := range d.Hosts {
		if err := d.Hosts[i].Validate(); err != nil {
			return nil, fmt.Errorf("hosts file %s: host %d: %w", f.path, i, err)
		}
	}
	return d.Hosts, nil
}

func (f *File) writeLocked(hosts []remote.HostConfig) error {
	b, err := json.MarshalIndent(hostsDoc{Hosts: hosts}, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(f.path, append(b, '\n')); err != nil {
		return fmt.Errorf("hosts file: %w", err)
	}
	return nil
}

// Save records h, replacing a saved host of the same name.
func (f *File) Save(h remote.HostConfig) error {
	if err := h.Validate(); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	hosts, err := f.loadLocked()
	if err != nil {
		return err
	}
	hosts = slices.DeleteFunc(hosts, func(o remote.HostConfig) bool { return o.Name == h.Name })
	return f.writeLocked(append(hosts, h))
}

// Delete forgets the saved host name.
func (f *File) Delete(name string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	hosts, err := f.loadLocked()
	if err != nil {
		return false, err
	}
	n := len(hosts)
	hosts = slices.DeleteFunc(hosts, func(o remote.HostConfig) bool { return o.Name == name })
	if len(hosts) == n {
		return false, nil
	}
	return true, f.writeLocked(hosts)
}

// Merge returns the configuration file's hosts followed by the saved
// ones; a saved host named like a configured one is left out (the file
// the operator edits wins), and named in skipped.
func Merge(configured, saved []remote.HostConfig) (all []remote.HostConfig, skipped []string) {
	all = slices.Clone(configured)
	for _, h := range saved {
		if slices.ContainsFunc(configured, func(c remote.HostConfig) bool { return c.Name == h.Name }) {
			skipped = append(skipped, h.Name)
			continue
		}
		all = append(all, h)
	}
	return all, skipped
}

// Store is the store manage_hosts saves to: the hosts file of the state
// directory dir when the configuration opts in, else none (changes last
// for the run).
func Store(file *config.File, dir string) hostsfamily.Store {
	if !file.SSH.PersistHosts {
		return nil
	}
	return New(dir)
}

// Router is the configuration file's hosts and, when it opts in, the
// saved ones of the state directory dir, as the SSH router takes them.
func Router(file *config.File, dir string, warn func(string, ...any)) ([]remote.HostConfig, error) {
	if !file.SSH.PersistHosts {
		return FromConfig(file.Hosts), nil
	}
	saved, err := New(dir).Load()
	if err != nil {
		return nil, err
	}
	all, skipped := Merge(FromConfig(file.Hosts), saved)
	for _, name := range skipped {
		warn("a saved host is named like one in the configuration file, which wins", "host", name, "file", filepath.Join(dir, Name))
	}
	return all, nil
}

// FromConfig turns the configuration's hosts into the SSH router's.
func FromConfig(hosts []config.Host) []remote.HostConfig {
	var out []remote.HostConfig
	for _, h := range hosts {
		out = append(out, remote.HostConfig{Name: h.Name, Address: h.Address, User: h.User, Port: h.Port,
			Key: h.Key, ProxyJump: h.ProxyJump, Labels: h.Labels, Helper: remote.HelperMode(h.Helper), Shell: exec.Shell(h.Shell)})
	}
	return out
}
