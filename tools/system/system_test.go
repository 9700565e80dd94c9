//go:build linux

package system_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/exec/remote"
	"github.com/rigout/rigout/exec/remote/sshtest"
	"github.com/rigout/rigout/gate"
	"github.com/rigout/rigout/internal/sshdtest"
	"github.com/rigout/rigout/rigouttest"
	"github.com/rigout/rigout/tools/system"
	"github.com/rigout/rigout/validate"
)

// connect builds a gateway with the family; with rc, SSH hosts too.
func connect(t *testing.T, rc *remote.RouterConfig) *client.Client {
	t.Helper()
	cfg := system.Config{}
	if rc != nil {
		c := *rc
		c.Local = &exec.Local{UnsafeNoSandbox: true}
		r, err := remote.NewRouter(c)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		cfg.Hosts = r
	}
	if cfg.Hosts == nil && cfg.Local == nil {
		cfg.Local = &exec.Local{UnsafeNoSandbox: true}
	}
	f, err := system.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rigouttest.Connect(t, rigouttest.New(t, rigout.Config{Tools: f.Tools()}))
}

// decode reads a result's structuredContent into v.
func decode(t *testing.T, res *mcp.CallToolResult, v any) {
	t.Helper()
	if res.IsError {
		t.Fatalf("error result: %s", rigouttest.Text(res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

// procMeminfo reads a /proc/meminfo field in bytes, directly.
func procMeminfo(t *testing.T, key string) uint64 {
	t.Helper()
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && k == key {
			n, _ := strconv.ParseUint(strings.Fields(v)[0], 10, 64)
			return n * 1024
		}
	}
	t.Fatalf("no %s in /proc/meminfo", key)
	return 0
}

func procRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func logicalCPUs(t *testing.T) int {
	return strings.Count(procRead(t, "/proc/cpuinfo"), "\nprocessor") + btoi(strings.HasPrefix(procRead(t, "/proc/cpuinfo"), "processor"))
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func uptime(t *testing.T) float64 {
	f, _ := strconv.ParseFloat(strings.Fields(procRead(t, "/proc/uptime"))[0], 64)
	return f
}

func within(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

// rootFS is / as statfs sees it: total and free-to-users bytes.
func rootFS(t *testing.T) (total, avail uint64) {
	var st syscall.Statfs_t
	if err := syscall.Statfs("/", &st); err != nil {
		t.Fatal(err)
	}
	return st.Blocks * uint64(st.Frsize), st.Bavail * uint64(st.Frsize)
}

// hosts are the ways the tests reach this machine: in process, and over a
// real OpenSSH sshd on loopback, which runs on the same machine, so both
// must agree with /proc read directly.
func hosts(t *testing.T) map[string]func(t *testing.T) (*client.Client, string) {
	return map[string]func(t *testing.T) (*client.Client, string){
		"local": func(t *testing.T) (*client.Client, string) { return connect(t, nil), "local" },
		"sshd": func(t *testing.T) (*client.Client, string) {
			d := sshdtest.Start(t, sshdtest.Options{})
			return connect(t, &d.Router), "box"
		},
	}
}

func TestHardwareInfo(t *testing.T) {
	for name, open := range hosts(t) {
		t.Run(name, func(t *testing.T) {
			c, host := open(t)
			res := rigouttest.Call(t, c, "get_hardware_info", map[string]any{"host": host})
			var hw system.Hardware
			decode(t, res, &hw)
			if want := procMeminfo(t, "MemTotal"); hw.Memory.TotalBytes != want {
				t.Errorf("memory total %d, /proc/meminfo %d", hw.Memory.TotalBytes, want)
			}
			if want := procMeminfo(t, "SwapTotal"); hw.Memory.SwapTotalBytes != want {
				t.Errorf("swap total %d, /proc/meminfo %d", hw.Memory.SwapTotalBytes, want)
			}
			if want := logicalCPUs(t); hw.CPU.LogicalCores != want {
				t.Errorf("logical cores %d, /proc/cpuinfo %d", hw.CPU.LogicalCores, want)
			}
			if hw.CPU.PhysicalCores < 1 || hw.CPU.PhysicalCores > hw.CPU.LogicalCores || hw.CPU.Model == "" {
				t.Errorf("cpu %+v", hw.CPU)
			}
			if want := strings.TrimSpace(procRead(t, "/proc/sys/kernel/osrelease")); hw.OS.Kernel != want {
				t.Errorf("kernel %q, /proc %q", hw.OS.Kernel, want)
			}
			if want, _ := os.Hostname(); hw.OS.Hostname != want {
				t.Errorf("hostname %q, want %q", hw.OS.Hostname, want)
			}
			if hw.OS.OS != "linux" || hw.OS.Arch == "" {
				t.Errorf("os %+v", hw.OS)
			}
			if !within(float64(hw.OS.UptimeSeconds), uptime(t), 5) {
				t.Errorf("uptime %d, /proc/uptime %.0f", hw.OS.UptimeSeconds, uptime(t))
			}
			total, _ := rootFS(t)
			var root *system.DiskUsage
			for i := range hw.Filesystems {
				if hw.Filesystems[i].Mount == "/" {
					root = &hw.Filesystems[i]
				}
			}
			if root == nil || root.TotalBytes/1024 != total/1024 {
				t.Errorf("/ = %+v, statfs total %d", root, total)
			}
			t.Logf("%s", rigouttest.Text(res))
			if hw.Source != map[string]string{"local": "gopsutil", "sshd": "proc"}[name] {
				t.Errorf("source %q", hw.Source)
			}
			if !strings.Contains(rigouttest.Text(res), hw.OS.Kernel) || hw.Cached {
				t.Errorf("summary %q cached %v", rigouttest.Text(res), hw.Cached)
			}

			// Cached per host; refresh reads again.
			var again system.Hardware
			decode(t, rigouttest.Call(t, c, "get_hardware_info", map[string]any{"host": host}), &again)
			if !again.Cached || !again.CollectedAt.Equal(hw.CollectedAt) {
				t.Errorf("second call: cached %v at %v, first at %v", again.Cached, again.CollectedAt, hw.CollectedAt)
			}
			var fresh system.Hardware
			decode(t, rigouttest.Call(t, c, "get_hardware_info", map[string]any{"host": host, "refresh": true}), &fresh)
			if fresh.Cached || !fresh.CollectedAt.After(hw.CollectedAt) {
				t.Errorf("refresh: cached %v at %v", fresh.Cached, fresh.CollectedAt)
			}
		})
	}
}

func TestSystemMonitoring(t *testing.T) {
	for name, open := range hosts(t) {
		t.Run(name, func(t *testing.T) {
			c, host := open(t)
			loBefore := netDev(t, "lo")
			res := rigouttest.Call(t, c, "system_monitoring", map[string]any{"host": host})
			var rep system.Report
			decode(t, res, &rep)
			if len(rep.Samples) != 1 {
				t.Fatalf("%d samples", len(rep.Samples))
			}
			s := rep.Samples[0]
			if s.CPU == nil || s.Memory == nil || s.Processes == nil {
				t.Fatalf("sample %+v", s)
			}
			if s.CPU.LogicalCores != logicalCPUs(t) || s.CPU.UsedPercent < 0 || s.CPU.UsedPercent > 100 {
				t.Errorf("cpu %+v", s.CPU)
			}
			if !within(s.IntervalSeconds, 1, 0.9) {
				t.Errorf("interval %v, want about 1s", s.IntervalSeconds)
			}
			if want := procMeminfo(t, "MemTotal"); s.Memory.TotalBytes != want {
				t.Errorf("memory total %d, want %d", s.Memory.TotalBytes, want)
			}
			avail := float64(procMeminfo(t, "MemAvailable"))
			if !within(float64(s.Memory.AvailableBytes), avail, avail*0.15) {
				t.Errorf("available %d, /proc/meminfo %.0f", s.Memory.AvailableBytes, avail)
			}
			total, free := rootFS(t)
			found := false
			for _, d := range s.Disks {
				if d.Mount == "/" {
					found = true
					if d.TotalBytes/1024 != total/1024 || !within(float64(d.FreeBytes), float64(free), float64(total)/100) {
						t.Errorf("/ %+v, statfs total %d free %d", d, total, free)
					}
				}
			}
			if !found {
				t.Errorf("no / in %+v", s.Disks)
			}
			var lo *system.NetworkIO
			for i := range s.Network {
				if s.Network[i].Interface == "lo" {
					lo = &s.Network[i]
				}
			}
			if lo == nil || lo.RxBytes < loBefore || lo.RxBytes > netDev(t, "lo") {
				t.Errorf("lo %+v, /proc/net/dev around it %d..%d", lo, loBefore, netDev(t, "lo"))
			}
			procs := countProcs(t)
			if !within(float64(s.Processes.Total), float64(procs), float64(procs)/2+5) || len(s.Processes.Top) == 0 || len(s.Processes.Top) > 10 {
				t.Errorf("processes %d (top %d), /proc has %d", s.Processes.Total, len(s.Processes.Top), procs)
			}
			if !strings.Contains(rigouttest.Text(res), "memory") {
				t.Errorf("summary %q", rigouttest.Text(res))
			}
		})
	}
}

// TestMonitoringDuration samples over a short duration, only the metrics
// asked for.
func TestMonitoringDuration(t *testing.T) {
	c := connect(t, nil)
	var rep system.Report
	decode(t, rigouttest.Call(t, c, "system_monitoring", map[string]any{"metrics": []any{"memory"}, "duration": 2}), &rep)
	if len(rep.Samples) != 1 || rep.Samples[0].CPU != nil || rep.Samples[0].Memory == nil || rep.Samples[0].Disks != nil {
		t.Fatalf("report %+v", rep)
	}
	if !within(rep.Samples[0].IntervalSeconds, 2, 0.5) {
		t.Errorf("interval %v, want about 2s", rep.Samples[0].IntervalSeconds)
	}
	// 10s: two samples 5s apart, each with CPU measured over its interval.
	decode(t, rigouttest.Call(t, c, "system_monitoring", map[string]any{"metrics": []any{"cpu"}, "duration": 10}), &rep)
	if len(rep.Samples) != 2 || !within(rep.Samples[1].IntervalSeconds, 5, 1) || rep.Samples[1].CPU == nil || !rep.Samples[1].Time.After(rep.Samples[0].Time) {
		t.Errorf("duration 10: %+v", rep.Samples)
	}
	// A memory snapshot does not wait.
	decode(t, rigouttest.Call(t, c, "system_monitoring", map[string]any{"metrics": []any{"memory"}}), &rep)
	if len(rep.Samples) != 1 || rep.Samples[0].IntervalSeconds > 0.5 {
		t.Errorf("memory snapshot: %+v", rep.Samples)
	}
	res := rigouttest.Call(t, c, "system_monitoring", map[string]any{"duration": 121})
	if !res.IsError || !strings.Contains(rigouttest.Text(res), "121") {
		t.Errorf("duration 121: %q", rigouttest.Text(res))
	}
}

func netDev(t *testing.T, iface string) uint64 {
	for _, line := range strings.Split(procRead(t, "/proc/net/dev"), "\n") {
		if name, rest, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(name) == iface {
			n, _ := strconv.ParseUint(strings.Fields(rest)[0], 10, 64)
			return n
		}
	}
	return 0
}

func countProcs(t *testing.T) int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err == nil {
			n++
		}
	}
	return n
}

// TestGateRefusal: the fixed commands pass the command gate like any
// other; a policy that does not list them refuses the call with the rule,
// and nothing reaches the host.
func TestGateRefusal(t *testing.T) {
	srv, err := sshtest.NewServer(sshtest.Config{RecordOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	key, err := sshtest.NewKey("ed25519")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	keyPath, known := filepath.Join(dir, "id"), filepath.Join(dir, "known_hosts")
	if err := key.Write(keyPath, ""); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(known, []byte(srv.KnownHostsLine()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := remote.NewRouter(remote.RouterConfig{
		Local: &exec.Local{UnsafeNoSandbox: true}, KnownHostsFile: known, HostKeyPolicy: remote.HostKeyStrict, HomeDir: dir,
		Hosts: []remote.HostConfig{{Name: "rec", Address: srv.Host(), Port: srv.Port(), User: "agent", Key: keyPath}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	g, err := gate.New(gate.Config{Policy: &validate.Policy{Mode: validate.ModeAllow, Allow: []string{"ls"}}})
	if err != nil {
		t.Fatal(err)
	}
	f, err := system.New(system.Config{Hosts: r, Gate: g})
	if err != nil {
		t.Fatal(err)
	}
	c := rigouttest.Connect(t, rigouttest.New(t, rigout.Config{Tools: f.Tools()}))
	for _, tool := range []string{"get_hardware_info", "system_monitoring"} {
		res := rigouttest.Call(t, c, tool, map[string]any{"host": "rec"})
		if !res.IsError || !strings.Contains(rigouttest.Text(res), "not-allowlisted") {
			t.Errorf("%s: %s", tool, rigouttest.Text(res))
		}
	}
	if cmds := srv.Commands(); len(cmds) != 0 {
		t.Errorf("sent: %v", cmds)
	}
}
