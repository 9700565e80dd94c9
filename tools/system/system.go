// Package system is the tool family that reports system facts:
// system_monitoring (CPU, memory, disks, network, GPUs, processes, sampled
// over a short duration) and get_hardware_info (CPU model and counts,
// memory, disks and filesystems, GPUs, OS, kernel and uptime, cached per
// host).
//
// # Overview
//
// On this machine the figures come from gopsutil, in process. On an SSH
// host no command is built from a call's arguments: the family runs one
// fixed set of read-only argv (tail of /proc files, df -P -k, ps, uname,
// lsblk) through the router and parses their output in Go. GPUs are read
// with nvidia-smi's CSV query where it is installed. Every command passes
// the command gate (package gate) like any other. Results are JSON in
// structuredContent, described by an output schema, with a short text
// summary beside it.
//
// get_hardware_info with host "auto" picks a host through the routing
// ladder, which is what Rigout's connect_hardware did: pick or test a
// target and report its platform and hardware.
//
// # Usage
//
//	sf, err := system.New(system.Config{Hosts: router})
//	if err != nil {
//		return err
//	}
//	gw, err := rigout.New(rigout.Config{Tools: sf.Tools()})
package system

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/gate"
	"github.com/rigout/rigout/tools/internal/family"
)

// Limits of system_monitoring, as Rigout's.
const (
	// MaxDuration is the longest duration a call may sample over.
	MaxDuration = 120 * time.Second
	// MaxSamples is how many samples one call takes at most.
	MaxSamples = 4
	// sampleEvery is the spacing samples aim for.
	sampleEvery = 5 * time.Second
	// snapshotWindow is what CPU use is measured over with no duration.
	snapshotWindow = time.Second
)

// Config configures the family. Local (or Hosts) is required, so that
// no command runs outside a sandbox by accident; the rest has useful zero
// values: this machine only, the default command policy.
type Config struct {
	// Local runs commands on this machine (nvidia-smi): an exec.Local
	// with a Sandbox, or with UnsafeNoSandbox to run them unconfined; with
	// Hosts, the hosts' local runner instead, which must be one too.
	// Required without Hosts: New fails with exec.ErrNoSandbox.
	Local exec.Runner
	// Hosts, if set, resolves the host argument (the SSH package\'s
	// Router lets the tools reach SSH hosts). The caller owns it. If nil,
	// exec.LocalHosts with Local: this machine only.
	Hosts exec.Hosts
	// Gate checks every command the family runs. If nil, a gate with the
	// default policy.
	Gate *gate.Gate
	// Now returns the current time. If nil, time.Now.
	Now func() time.Time
}

// Family is the system tool family. It is safe for concurrent use.
type Family struct {
	cfg   Config
	hosts exec.Hosts

	// mu protects the following.
	mu    sync.Mutex
	cache map[string]Hardware // by host
}

// New builds the family from cfg, which is copied.
func New(cfg Config) (*Family, error) {
	c := cfg
	hosts, g, err := family.Setup("system", c.Local, c.Hosts, c.Gate)
	if err != nil {
		return nil, err
	}
	c.Gate = g
	if c.Now == nil {
		c.Now = time.Now
	}
	return &Family{cfg: c, hosts: hosts, cache: map[string]Hardware{}}, nil
}

// Tools returns the family's tools.
func (f *Family) Tools() []rigout.Tool {
	return []rigout.Tool{f.SystemMonitoring(), f.HardwareInfo()}
}

// Instructions is the family's part of the initialize instructions.
func (f *Family) Instructions() string {
	return "system_monitoring and get_hardware_info report metrics and hardware as JSON (host as execute_command takes it)."
}

var monitoringInput = json.RawMessage(`{
  "type": "object",
  "properties": {
    "metrics": {"type": "array", "items": {"type": "string", "enum": ["cpu", "memory", "disk", "network", "gpu", "processes", "all"]}, "description": "Default all."},
    "duration": {"type": "integer", "minimum": 0, "maximum": 120, "description": "Seconds to sample over (up to 4 samples); 0: one snapshot."},
    "host": {"type": "string", "description": "local (default), an SSH alias, user@host, or auto."}
  },
  "additionalProperties": false
}`)

var monitoringOutput = json.RawMessage(`{
  "type": "object",
  "properties": {
    "host": {"type": "string"}, "route": {"type": "string"}, "source": {"type": "string"},
    "samples": {"type": "array", "items": {"type": "object"}},
    "notes": {"type": "array", "items": {"type": "string"}}
  },
  "required": ["host", "route", "source", "samples"]
}`)

var hardwareInput = json.RawMessage(`{
  "type": "object",
  "properties": {
    "refresh": {"type": "boolean", "description": "Read again instead of the cached facts."},
    "host": {"type": "string", "description": "local (default), an SSH alias, user@host, or auto (picks a reachable host)."}
  },
  "additionalProperties": false
}`)

var hardwareOutput = json.RawMessage(`{
  "type": "object",
  "properties": {
    "host": {"type": "string"}, "route": {"type": "string"}, "source": {"type": "string"},
    "collected_at": {"type": "string"}, "cached": {"type": "boolean"},
    "os": {"type": "object"}, "cpu": {"type": "object"}, "memory": {"type": "object"},
    "disks": {"type": "array"}, "filesystems": {"type": "array"}, "gpus": {"type": "array"},
    "notes": {"type": "array", "items": {"type": "string"}}
  },
  "required": ["host", "route", "os", "cpu", "memory"]
}`)

// SystemMonitoring returns the system_monitoring tool.
func (f *Family) SystemMonitoring() rigout.Tool {
	return rigout.Tool{
		Name:         "system_monitoring",
		Description:  "CPU, memory, disk, network, GPU and process figures of a host, as JSON; sampled over duration seconds.",
		InputSchema:  monitoringInput,
		OutputSchema: monitoringOutput,
		Risk:         rigout.ReadOnly,
		Hosts:        []rigout.HostArg{{Name: "host"}},
		DefaultHost:  "local",
		Handler:      f.monitor,
	}
}

// HardwareInfo returns the get_hardware_info tool.
func (f *Family) HardwareInfo() rigout.Tool {
	return rigout.Tool{
		Name:         "get_hardware_info",
		Description:  "A host's CPU, memory, disks, filesystems, GPUs, OS, kernel and uptime, as JSON; cached per host unless refresh.",
		InputSchema:  hardwareInput,
		OutputSchema: hardwareOutput,
		Risk:         rigout.ReadOnly,
		Hosts:        []rigout.HostArg{{Name: "host"}},
		DefaultHost:  "local",
		Handler:      f.hardwareInfo,
	}
}

// metricSet is which metrics a call wants.
type metricSet struct{ cpu, memory, disk, network, gpu, processes bool }

func parseMetrics(names []string) metricSet {
	if len(names) == 0 || slices.Contains(names, "all") {
		return metricSet{true, true, true, true, true, true}
	}
	var m metricSet
	for _, n := range names {
		switch n {
		case "cpu":
			m.cpu = true
		case "memory":
			m.memory = true
		case "disk":
			m.disk = true
		case "network":
			m.network = true
		case "gpu":
			m.gpu = true
		case "processes":
			m.processes = true
		}
	}
	return m
}

// reading is one raw reading of a host: counters (CPU, network) that a
// sample turns into rates against the reading before, and the rest.
type reading struct {
	at        time.Time
	cpu       cpuTimes
	cores     int
	load      [3]float64
	memory    *MemoryUsage
	disks     []DiskUsage
	network   []NetworkIO
	processes *ProcessCounts
	gpus      []GPU
	gpuNote   string
}

// source reads one host.
type source interface {
	name() string
	read(ctx context.Context, want metricSet) (reading, error)
	hardware(ctx context.Context) (Hardware, error)
}

// refusedError carries the gate's refusal of a command, which is the call's
// answer.
type refusedError struct{ res *mcp.CallToolResult }

func (e *refusedError) Error() string { return "refused by the command policy" }

func errOr(err error, msg string) error {
	if err != nil {
		return err
	}
	return errors.New(msg)
}

// open resolves the call's host and returns how to read it.
func (f *Family) open(ctx context.Context, call *rigout.Call) (source, exec.Target, error) {
	host := call.Hosts()[0]
	t, err := f.hosts.Resolve(ctx, host, call.Principal().Name)
	if err != nil {
		return nil, t, err
	}
	call.Outcome.Route = t.Route
	run := func(ctx context.Context, argv []string) (string, int, error) {
		if res := f.cfg.Gate.Check(ctx, call, gate.Command{Host: host, Argv: argv}); res != nil {
			return "", 0, &refusedError{res}
		}
		r, err := t.Runner.Run(ctx, exec.Command{Argv: argv, Timeout: 30 * time.Second, MaxOutput: 4 << 20})
		if err != nil {
			return "", 0, err
		}
		family.Unsandboxed(&call.Outcome, t.Local, r)
		return string(r.Stdout.Data), r.ExitCode, nil
	}
	if t.Local {
		return localSource{gpu: nvidiaGPUs(run)}, t, nil
	}
	return remoteSource{run: run, gpu: nvidiaGPUs(run)}, t, nil
}

// failed turns a collection error into the call's answer.
func failed(call *rigout.Call, host string, err error) (*mcp.CallToolResult, error) {
	var re *refusedError
	if errors.As(err, &re) {
		return re.res, nil
	}
	call.Outcome.Status = audit.StatusError
	call.Outcome.Error = err.Error()
	return rigout.ErrorResult("could not read %s: %v", host, err), nil
}

// plan returns how many samples a duration takes and how far apart.
func plan(d time.Duration) (int, time.Duration) {
	if d <= 0 {
		return 1, snapshotWindow
	}
	n := min(max(int(d/sampleEvery), 1), MaxSamples)
	return n, d / time.Duration(n)
}

type monitorArgs struct {
	Metrics  []string `json:"metrics"`
	Duration int64    `json:"duration"`
}

func (f *Family) monitor(ctx context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
	var a monitorArgs
	if err := call.Bind(&a); err != nil {
		return nil, err
	}
	d := time.Duration(a.Duration) * time.Second
	if d > MaxDuration {
		call.Outcome.Status = audit.StatusInvalid
		return rigout.ErrorResult("duration %ds exceeds the maximum of %ds", a.Duration, int64(MaxDuration/time.Second)), nil
	}
	want := parseMetrics(a.Metrics)
	host := call.Hosts()[0]
	src, t, err := f.open(ctx, call)
	if err != nil {
		return failed(call, host, err)
	}
	n, every := plan(d)
	rep := Report{Host: host, Route: t.Route, Source: src.name()}
	// The baseline: counters that the first sample's rates start from.
	prev := reading{at: f.cfg.Now()}
	if want.cpu || want.network {
		if prev, err = src.read(ctx, metricSet{cpu: want.cpu, network: want.network}); err != nil {
			return failed(call, host, err)
		}
		prev.at = f.cfg.Now()
	}
	// A snapshot of figures that need no interval is taken at once.
	instant := d == 0 && !want.cpu && !want.network
	progress := call.WantsProgress(ctx)
	for i := range n {
		if !instant {
			timer := time.NewTimer(every)
			select {
			case <-ctx.Done():
				timer.Stop()
				return failed(call, host, context.Cause(ctx))
			case <-timer.C:
			}
		}
		cur, err := src.read(ctx, want)
		if err != nil {
			return failed(call, host, err)
		}
		cur.at = f.cfg.Now()
		rep.Samples = append(rep.Samples, sample(want, prev, cur))
		if cur.gpuNote != "" && !slices.Contains(rep.Notes, cur.gpuNote) {
			rep.Notes = append(rep.Notes, cur.gpuNote)
		}
		prev = cur
		if progress {
			_ = call.Progress(ctx, float64(i+1), float64(n), fmt.Sprintf("sample %d of %d", i+1, n))
		}
	}
	return result(monitorSummary(rep), rep)
}

// sample turns two readings into one Sample.
func sample(want metricSet, prev, cur reading) Sample {
	dt := cur.at.Sub(prev.at).Seconds()
	s := Sample{Time: cur.at.UTC(), IntervalSeconds: round2(dt), Memory: cur.memory, Disks: cur.disks, GPUs: cur.gpus, Processes: cur.processes}
	if want.cpu {
		s.CPU = &CPUUsage{LogicalCores: cur.cores, UsedPercent: usedPercent(prev.cpu, cur.cpu), Load1: cur.load[0], Load5: cur.load[1], Load15: cur.load[2]}
	}
	if want.network {
		before := map[string]NetworkIO{}
		for _, n := range prev.network {
			before[n.Interface] = n
		}
		for _, n := range cur.network {
			if b, ok := before[n.Interface]; ok && dt > 0 && n.RxBytes >= b.RxBytes && n.TxBytes >= b.TxBytes {
				n.RxBytesPerSec = round2(float64(n.RxBytes-b.RxBytes) / dt)
				n.TxBytesPerSec = round2(float64(n.TxBytes-b.TxBytes) / dt)
			}
			s.Network = append(s.Network, n)
		}
	}
	return s
}

// result is a JSON result: the summary, the JSON text (for clients that do
// not read structuredContent) and the structuredContent.
func result(summary string, v any) (*mcp.CallToolResult, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("system: result: %w", err)
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{mcp.NewTextContent(summary), mcp.NewTextContent(string(b))},
		StructuredContent: v,
	}, nil
}

func gib(b uint64) string { return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30)) }

func monitorSummary(r Report) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s (via %s), %d sample(s)", r.Host, r.Route, len(r.Samples))
	if len(r.Samples) == 0 {
		return sb.String()
	}
	s := r.Samples[len(r.Samples)-1]
	if c := s.CPU; c != nil {
		fmt.Fprintf(&sb, "; cpu %.1f%% of %d cores, load %.2f %.2f %.2f", c.UsedPercent, c.LogicalCores, c.Load1, c.Load5, c.Load15)
	}
	if m := s.Memory; m != nil {
		fmt.Fprintf(&sb, "; memory %s of %s used (%.0f%%)", gib(m.UsedBytes), gib(m.TotalBytes), m.UsedPercent)
	}
	for i, d := range s.Disks {
		if i == 3 {
			fmt.Fprintf(&sb, "; %d more filesystems", len(s.Disks)-3)
			break
		}
		fmt.Fprintf(&sb, "; %s %.0f%% of %s", d.Mount, d.UsedPercent, gib(d.TotalBytes))
	}
	if len(s.GPUs) > 0 {
		fmt.Fprintf(&sb, "; %d GPU(s)", len(s.GPUs))
	}
	if p := s.Processes; p != nil {
		fmt.Fprintf(&sb, "; %d processes", p.Total)
	}
	return sb.String()
}

type hardwareArgs struct {
	Refresh bool `json:"refresh"`
}

func (f *Family) hardwareInfo(ctx context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
	var a hardwareArgs
	if err := call.Bind(&a); err != nil {
		return nil, err
	}
	host := call.Hosts()[0]
	if !a.Refresh {
		f.mu.Lock()
		hw, ok := f.cache[host]
		f.mu.Unlock()
		if ok {
			call.Outcome.Route = hw.Route
			hw.Cached = true
			return result(hardwareSummary(hw), hw)
		}
	}
	src, t, err := f.open(ctx, call)
	if err != nil {
		return failed(call, host, err)
	}
	hw, err := src.hardware(ctx)
	if err != nil {
		return failed(call, host, err)
	}
	hw.Host, hw.Route, hw.Source, hw.CollectedAt = host, t.Route, src.name(), f.cfg.Now().UTC()
	// Empty lists, not null: "none found" is a fact.
	if hw.Disks == nil {
		hw.Disks = []BlockDevice{}
	}
	if hw.Filesystems == nil {
		hw.Filesystems = []DiskUsage{}
	}
	if hw.GPUs == nil {
		hw.GPUs = []GPU{}
	}
	f.mu.Lock()
	f.cache[host] = hw
	f.mu.Unlock()
	return result(hardwareSummary(hw), hw)
}

func hardwareSummary(h Hardware) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s (via %s): %s %s %s, kernel %s %s; %s, %d cores (%d physical); %s memory; %d disk(s), %d filesystem(s), %d GPU(s); up %s",
		h.Host, h.Route, h.OS.Hostname, h.OS.Platform, h.OS.PlatformVersion, h.OS.Kernel, h.OS.Arch,
		h.CPU.Model, h.CPU.LogicalCores, h.CPU.PhysicalCores, gib(h.Memory.TotalBytes),
		len(h.Disks), len(h.Filesystems), len(h.GPUs), (time.Duration(h.OS.UptimeSeconds) * time.Second).String())
	if h.Cached {
		fmt.Fprintf(&sb, " (cached from %s; refresh reads again)", h.CollectedAt.Format(time.RFC3339))
	}
	return sb.String()
}
