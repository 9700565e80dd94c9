package system

import (
	"context"
	"fmt"
	"strings"
)

// The fixed, read-only argv an SSH host is read with. None takes anything
// from a call's arguments.
var (
	procArgv  = []string{"tail", "-n", "+1", "--", "/proc/stat", "/proc/meminfo", "/proc/loadavg", "/proc/net/dev", "/proc/mounts"}
	dfArgv    = []string{"df", "-P", "-k"}
	psArgv    = []string{"ps", "-e", "-o", "pid=", "-o", "rss=", "-o", "pcpu=", "-o", "comm="}
	gpuArgv   = []string{"nvidia-smi", "--query-gpu=" + gpuQuery, "--format=csv,noheader,nounits"}
	hwArgv    = []string{"tail", "-n", "+1", "--", "/proc/cpuinfo", "/proc/meminfo", "/proc/uptime", "/proc/sys/kernel/hostname", "/etc/os-release", "/proc/mounts"}
	unameArgv = []string{"uname", "-s", "-r", "-m"}
	lsblkArgv = []string{"lsblk", "-b", "-d", "-n", "-P", "-o", "NAME,SIZE,ROTA,TYPE,MODEL"}
)

// runFunc runs one fixed argv on the host and returns its stdout and exit
// code; an error means it could not run (or the command gate refused it).
type runFunc func(ctx context.Context, argv []string) (stdout string, exit int, err error)

// remoteSource reads an SSH host by running the fixed argv above and
// parsing their output in Go.
type remoteSource struct {
	run runFunc
	gpu func(ctx context.Context) ([]GPU, string, error)
}

func (s remoteSource) name() string { return "proc" }

// must runs argv and wants exit 0.
func (s remoteSource) must(ctx context.Context, argv []string) (string, error) {
	out, code, err := s.run(ctx, argv)
	if err != nil {
		return "", err
	}
	if code != 0 {
		return "", fmt.Errorf("%s exited with %d", strings.Join(argv[:1], ""), code)
	}
	return out, nil
}

func (s remoteSource) read(ctx context.Context, want metricSet) (reading, error) {
	var r reading
	var mounts map[string]mount
	if want.cpu || want.memory || want.network || want.disk {
		out, err := s.must(ctx, procArgv)
		if err != nil {
			return r, err
		}
		sec := sections(out)
		r.cpu, r.cores = parseStat(sec["/proc/stat"])
		r.load[0], r.load[1], r.load[2] = parseLoadavg(sec["/proc/loadavg"])
		if want.memory {
			r.memory = memoryFrom(parseMeminfo(sec["/proc/meminfo"]))
		}
		if want.network {
			r.network = parseNetDev(sec["/proc/net/dev"])
		}
		mounts = parseMounts(sec["/proc/mounts"])
	}
	if want.disk {
		// df exits 1 when one filesystem cannot be read; what it
		// printed of the others still counts.
		out, _, err := s.run(ctx, dfArgv)
		if err != nil {
			return r, err
		}
		r.disks = parseDF(out, mounts)
	}
	if want.processes {
		out, err := s.must(ctx, psArgv)
		if err != nil {
			return r, err
		}
		r.processes = parsePS(out)
	}
	if want.gpu {
		var err error
		if r.gpus, r.gpuNote, err = s.gpu(ctx); err != nil {
			return r, err
		}
	}
	return r, nil
}

func (s remoteSource) hardware(ctx context.Context) (Hardware, error) {
	var hw Hardware
	// tail exits 1 when a file is missing (/etc/os-release on some
	// systems); the others are still printed.
	out, _, err := s.run(ctx, hwArgv)
	if err != nil {
		return hw, err
	}
	sec := sections(out)
	if sec["/proc/cpuinfo"] == "" {
		return hw, fmt.Errorf("could not read /proc/cpuinfo (is this a Linux host?)")
	}
	hw.CPU = parseCPUInfo(sec["/proc/cpuinfo"])
	m := parseMeminfo(sec["/proc/meminfo"])
	hw.Memory = MemoryInfo{TotalBytes: m["MemTotal"], SwapTotalBytes: m["SwapTotal"]}
	hw.OS.UptimeSeconds = parseUptime(sec["/proc/uptime"])
	hw.OS.Hostname = strings.TrimSpace(sec["/proc/sys/kernel/hostname"])
	hw.OS.Platform, hw.OS.PlatformVersion = parseOSRelease(sec["/etc/os-release"])
	un, err := s.must(ctx, unameArgv)
	if err != nil {
		return hw, err
	}
	if f := strings.Fields(un); len(f) == 3 {
		hw.OS.OS, hw.OS.Kernel, hw.OS.Arch = strings.ToLower(f[0]), f[1], f[2]
	}
	if out, code, err := s.run(ctx, lsblkArgv); err == nil && code == 0 {
		hw.Disks = parseLsblk(out)
	} else {
		hw.Notes = append(hw.Notes, "lsblk is not available: disks are not listed")
	}
	df, _, err := s.run(ctx, dfArgv)
	if err != nil {
		return hw, err
	}
	hw.Filesystems = parseDF(df, parseMounts(sec["/proc/mounts"]))
	var note string
	if hw.GPUs, note, err = s.gpu(ctx); err != nil {
		return hw, err
	}
	if note != "" {
		hw.Notes = append(hw.Notes, note)
	}
	return hw, nil
}

// nvidiaGPUs runs nvidia-smi through run. A host without it has no GPUs
// it can report, which the note says.
func nvidiaGPUs(run runFunc) func(ctx context.Context) ([]GPU, string, error) {
	return func(ctx context.Context) ([]GPU, string, error) {
		out, code, err := run(ctx, gpuArgv)
		switch {
		case err != nil:
			if _, refused := err.(*refusedError); refused {
				return nil, "", err
			}
			return nil, "nvidia-smi is not available: no GPUs reported", nil
		case code == 127:
			return nil, "nvidia-smi is not available: no GPUs reported", nil
		case code != 0:
			return nil, fmt.Sprintf("nvidia-smi exited with %d: no GPUs reported", code), nil
		}
		return parseNvidia(out), "", nil
	}
}
