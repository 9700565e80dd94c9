package system

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/shirou/gopsutil/v4/cpu"
	"github.com/shirou/gopsutil/v4/disk"
	"github.com/shirou/gopsutil/v4/host"
	"github.com/shirou/gopsutil/v4/load"
	"github.com/shirou/gopsutil/v4/mem"
	psnet "github.com/shirou/gopsutil/v4/net"
	"github.com/shirou/gopsutil/v4/process"
)

// localSource reads this machine through gopsutil, in process: no command
// runs except nvidia-smi.
type localSource struct {
	gpu func(ctx context.Context) ([]GPU, string, error)
}

func (s localSource) name() string { return "gopsutil" }

func (s localSource) read(ctx context.Context, want metricSet) (reading, error) {
	var r reading
	if want.cpu {
		t, err := cpu.TimesWithContext(ctx, false)
		if err != nil || len(t) == 0 {
			return r, errOr(err, "no CPU times")
		}
		c := t[0]
		r.cpu = cpuTimes{total: c.User + c.Nice + c.System + c.Idle + c.Iowait + c.Irq + c.Softirq + c.Steal, idle: c.Idle + c.Iowait}
		r.cores, _ = cpu.CountsWithContext(ctx, true)
		if l, err := load.AvgWithContext(ctx); err == nil {
			r.load = [3]float64{l.Load1, l.Load5, l.Load15}
		}
	}
	if want.memory {
		v, err := mem.VirtualMemoryWithContext(ctx)
		if err != nil {
			return r, err
		}
		sw, err := mem.SwapMemoryWithContext(ctx)
		if err != nil {
			return r, err
		}
		r.memory = newMemory(v.Total, v.Available, sw.Total, sw.Used)
	}
	if want.disk {
		d, err := localDisks(ctx)
		if err != nil {
			return r, err
		}
		r.disks = d
	}
	if want.network {
		n, err := psnet.IOCountersWithContext(ctx, true)
		if err != nil {
			return r, err
		}
		for _, c := range n {
			r.network = append(r.network, NetworkIO{Interface: c.Name, RxBytes: c.BytesRecv, TxBytes: c.BytesSent, RxPackets: c.PacketsRecv, TxPackets: c.PacketsSent})
		}
	}
	if want.processes {
		r.processes = localProcesses(ctx)
	}
	if want.gpu {
		var err error
		if r.gpus, r.gpuNote, err = s.gpu(ctx); err != nil {
			return r, err
		}
	}
	return r, nil
}

// localDisks lists the mounted filesystems with their usage.
func localDisks(ctx context.Context) ([]DiskUsage, error) {
	parts, err := disk.PartitionsWithContext(ctx, true)
	if err != nil {
		return nil, err
	}
	var out []DiskUsage
	seen := map[string]bool{}
	for _, p := range parts {
		if seen[p.Mountpoint] || pseudoFS[p.Fstype] || len(out) == maxFilesystems {
			continue
		}
		u, err := disk.UsageWithContext(ctx, p.Mountpoint)
		if err != nil || !keepFS(p.Fstype, u.Total) {
			continue
		}
		seen[p.Mountpoint] = true
		out = append(out, newDisk(p.Mountpoint, p.Device, p.Fstype, u.Total, u.Used, u.Free))
	}
	return out, nil
}

// localProcesses counts processes and lists those using the most memory.
func localProcesses(ctx context.Context) *ProcessCounts {
	ps, err := process.ProcessesWithContext(ctx)
	if err != nil {
		return &ProcessCounts{}
	}
	all := make([]Process, 0, len(ps))
	for _, p := range ps {
		mi, err := p.MemoryInfoWithContext(ctx)
		if err != nil {
			continue // gone, or not readable
		}
		name, _ := p.NameWithContext(ctx)
		cpuPct, _ := p.CPUPercentWithContext(ctx)
		all = append(all, Process{PID: p.Pid, Name: name, RSSBytes: mi.RSS, CPUPercent: round2(cpuPct)})
	}
	return &ProcessCounts{Total: len(all), Top: topProcesses(all)}
}

func (s localSource) hardware(ctx context.Context) (Hardware, error) {
	var hw Hardware
	hi, err := host.InfoWithContext(ctx)
	if err != nil {
		return hw, err
	}
	hw.OS = OSInfo{Hostname: hi.Hostname, OS: hi.OS, Platform: hi.Platform, PlatformVersion: hi.PlatformVersion,
		Kernel: hi.KernelVersion, Arch: hi.KernelArch, UptimeSeconds: hi.Uptime}
	infos, err := cpu.InfoWithContext(ctx)
	if err != nil {
		return hw, err
	}
	sockets := map[string]bool{}
	for _, c := range infos {
		sockets[c.PhysicalID] = true
	}
	if len(infos) > 0 {
		hw.CPU = CPUInfo{Model: infos[0].ModelName, Vendor: infos[0].VendorID, MHz: infos[0].Mhz}
	}
	hw.CPU.Sockets = max(len(sockets), 1)
	hw.CPU.LogicalCores, _ = cpu.CountsWithContext(ctx, true)
	hw.CPU.PhysicalCores, _ = cpu.CountsWithContext(ctx, false)
	v, err := mem.VirtualMemoryWithContext(ctx)
	if err != nil {
		return hw, err
	}
	sw, err := mem.SwapMemoryWithContext(ctx)
	if err != nil {
		return hw, err
	}
	hw.Memory = MemoryInfo{TotalBytes: v.Total, SwapTotalBytes: sw.Total}
	hw.Disks = sysBlock("/sys/block")
	if hw.Filesystems, err = localDisks(ctx); err != nil {
		return hw, err
	}
	var note string
	if hw.GPUs, note, err = s.gpu(ctx); err != nil {
		return hw, err
	}
	if note != "" {
		hw.Notes = append(hw.Notes, note)
	}
	return hw, nil
}

// sysBlock lists the disks under dir (/sys/block): their size (in 512-byte
// sectors), model and whether they rotate. Loop and RAM devices and empty
// ones are left out.
func sysBlock(dir string) []BlockDevice {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []BlockDevice
	read := func(name, file string) string {
		b, _ := os.ReadFile(filepath.Join(dir, name, file))
		return strings.TrimSpace(string(b))
	}
	for _, e := range entries {
		n := e.Name()
		if skipBlock(n) {
			continue
		}
		sectors, _ := strconv.ParseUint(read(n, "size"), 10, 64)
		if sectors == 0 {
			continue
		}
		out = append(out, BlockDevice{Name: n, SizeBytes: sectors * 512, Model: read(n, "device/model"), Rotational: read(n, "queue/rotational") == "1"})
	}
	return out
}
