package system

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// This file parses what the fixed, read-only commands print on an SSH
// host: /proc files, df -P -k, ps, lsblk, uname and nvidia-smi. Nothing
// here builds a command; the argv are constants (see remote.go).

// cpuTimes are the jiffies /proc/stat's first line counts: all of them,
// and those spent idle (idle and iowait).
type cpuTimes struct{ total, idle float64 }

// usedPercent is the CPU use between two readings.
func usedPercent(a, b cpuTimes) float64 {
	dt := b.total - a.total
	if dt <= 0 {
		return 0
	}
	p := 100 * (dt - (b.idle - a.idle)) / dt
	return round2(min(max(p, 0), 100))
}

func round2(f float64) float64 { return float64(int64(f*100+0.5)) / 100 }

// sections splits the output of `tail -n +1 -- FILE…` into each file's
// text, by the "==> FILE <==" headers tail prints between them.
func sections(out string) map[string]string {
	m := map[string]string{}
	var name string
	var b strings.Builder
	flush := func() {
		if name != "" {
			m[name] = b.String()
		}
		b.Reset()
	}
	for line := range strings.Lines(out) {
		t := strings.TrimRight(line, "\n")
		if strings.HasPrefix(t, "==> ") && strings.HasSuffix(t, " <==") {
			flush()
			name = strings.TrimSuffix(strings.TrimPrefix(t, "==> "), " <==")
			continue
		}
		b.WriteString(line)
	}
	flush()
	return m
}

// parseStat reads /proc/stat: the aggregate CPU times and the number of
// cpuN lines.
func parseStat(s string) (cpuTimes, int) {
	var t cpuTimes
	n := 0
	for line := range strings.Lines(s) {
		f := strings.Fields(line)
		if len(f) < 5 || !strings.HasPrefix(f[0], "cpu") {
			continue
		}
		if f[0] != "cpu" {
			n++
			continue
		}
		for i, v := range f[1:min(len(f), 9)] { // user … steal; guest is inside user
			x, _ := strconv.ParseFloat(v, 64)
			t.total += x
			if i == 3 || i == 4 {
				t.idle += x
			}
		}
	}
	return t, n
}

// parseMeminfo reads /proc/meminfo into bytes by key.
func parseMeminfo(s string) map[string]uint64 {
	m := map[string]uint64{}
	for line := range strings.Lines(s) {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			continue
		}
		if len(f) > 1 && f[1] == "kB" {
			n *= 1024
		}
		m[k] = n
	}
	return m
}

// memoryFrom turns /proc/meminfo into MemoryUsage.
func memoryFrom(m map[string]uint64) *MemoryUsage {
	avail, ok := m["MemAvailable"]
	if !ok {
		avail = m["MemFree"] + m["Buffers"] + m["Cached"]
	}
	return newMemory(m["MemTotal"], avail, m["SwapTotal"], m["SwapTotal"]-min(m["SwapFree"], m["SwapTotal"]))
}

func newMemory(total, avail, swapTotal, swapUsed uint64) *MemoryUsage {
	u := &MemoryUsage{TotalBytes: total, AvailableBytes: avail, SwapTotalBytes: swapTotal, SwapUsedBytes: swapUsed}
	if total > avail {
		u.UsedBytes = total - avail
	}
	if total > 0 {
		u.UsedPercent = round2(100 * float64(u.UsedBytes) / float64(total))
	}
	return u
}

// parseLoadavg reads /proc/loadavg.
func parseLoadavg(s string) (l1, l5, l15 float64) {
	f := strings.Fields(s)
	if len(f) >= 3 {
		l1, _ = strconv.ParseFloat(f[0], 64)
		l5, _ = strconv.ParseFloat(f[1], 64)
		l15, _ = strconv.ParseFloat(f[2], 64)
	}
	return
}

// parseUptime reads /proc/uptime's first field, in whole seconds.
func parseUptime(s string) uint64 {
	f := strings.Fields(s)
	if len(f) == 0 {
		return 0
	}
	x, _ := strconv.ParseFloat(f[0], 64)
	return uint64(x)
}

// parseNetDev reads /proc/net/dev.
func parseNetDev(s string) []NetworkIO {
	var out []NetworkIO
	for line := range strings.Lines(s) {
		name, rest, ok := strings.Cut(line, ":")
		if !ok || strings.Contains(name, "|") {
			continue
		}
		f := strings.Fields(rest)
		if len(f) < 10 {
			continue
		}
		n := func(i int) uint64 { x, _ := strconv.ParseUint(f[i], 10, 64); return x }
		out = append(out, NetworkIO{Interface: strings.TrimSpace(name), RxBytes: n(0), RxPackets: n(1), TxBytes: n(8), TxPackets: n(9)})
	}
	return out
}

// mount is one line of /proc/mounts.
type mount struct{ device, fstype string }

// parseMounts reads /proc/mounts by mount point (octal escapes decoded).
func parseMounts(s string) map[string]mount {
	m := map[string]mount{}
	for line := range strings.Lines(s) {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		m[unescapeMount(f[1])] = mount{device: unescapeMount(f[0]), fstype: f[2]}
	}
	return m
}

// unescapeMount decodes the \NNN octal escapes /proc/mounts uses for
// spaces, tabs, newlines and backslashes.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// pseudoFS are filesystem types that hold no disk space worth reporting.
var pseudoFS = map[string]bool{
	"proc": true, "sysfs": true, "devtmpfs": true, "devpts": true, "tmpfs": true, "cgroup": true, "cgroup2": true,
	"securityfs": true, "pstore": true, "bpf": true, "tracefs": true, "debugfs": true, "mqueue": true, "hugetlbfs": true,
	"configfs": true, "fusectl": true, "autofs": true, "binfmt_misc": true, "nsfs": true, "ramfs": true, "efivarfs": true,
	"rpc_pipefs": true, "squashfs": true, "selinuxfs": true, "fuse.lxcfs": true, "fuse.portal": true, "nfsd": true,
}

// maxFilesystems caps the filesystems a result lists.
const maxFilesystems = 50

// keepFS reports whether a filesystem is listed.
func keepFS(fstype string, total uint64) bool { return total > 0 && !pseudoFS[fstype] }

func newDisk(mountPoint, device, fstype string, total, used, free uint64) DiskUsage {
	d := DiskUsage{Mount: mountPoint, Device: device, FSType: fstype, TotalBytes: total, UsedBytes: used, FreeBytes: free}
	if used+free > 0 {
		// As df: used over what a user could have.
		d.UsedPercent = round2(100 * float64(used) / float64(used+free))
	}
	return d
}

// parseDF reads `df -P -k`, with types from /proc/mounts.
func parseDF(s string, mounts map[string]mount) []DiskUsage {
	var out []DiskUsage
	seen := map[string]bool{}
	for i, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if i == 0 || len(f) < 6 {
			continue
		}
		mp := strings.Join(f[5:], " ")
		kb := func(j int) uint64 { x, _ := strconv.ParseUint(f[j], 10, 64); return x * 1024 }
		fstype := mounts[mp].fstype
		if seen[mp] || !keepFS(fstype, kb(1)) || len(out) == maxFilesystems {
			continue
		}
		seen[mp] = true
		out = append(out, newDisk(mp, f[0], fstype, kb(1), kb(2), kb(3)))
	}
	return out
}

// maxProcesses is how many processes a result lists.
const maxProcesses = 10

// parsePS reads `ps -e -o pid= -o rss= -o pcpu= -o comm=`.
func parsePS(s string) *ProcessCounts {
	pc := &ProcessCounts{}
	var all []Process
	for line := range strings.Lines(s) {
		f := strings.Fields(line)
		if len(f) < 4 {
			continue
		}
		pid, err := strconv.ParseInt(f[0], 10, 32)
		if err != nil {
			continue
		}
		rss, _ := strconv.ParseUint(f[1], 10, 64)
		cpu, _ := strconv.ParseFloat(f[2], 64)
		all = append(all, Process{PID: int32(pid), RSSBytes: rss * 1024, CPUPercent: cpu, Name: strings.Join(f[3:], " ")})
	}
	pc.Total = len(all)
	pc.Top = topProcesses(all)
	return pc
}

// topProcesses returns the processes using the most memory, at most
// maxProcesses.
func topProcesses(all []Process) []Process {
	sortProcesses(all)
	return append([]Process{}, all[:min(len(all), maxProcesses)]...)
}

// parseCPUInfo reads /proc/cpuinfo.
func parseCPUInfo(s string) CPUInfo {
	var c CPUInfo
	cores := map[string]bool{}
	sockets := map[string]bool{}
	phys := ""
	for line := range strings.Lines(s) {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "processor":
			c.LogicalCores++
		case "model name", "Model", "cpu model":
			if c.Model == "" {
				c.Model = v
			}
		case "vendor_id", "CPU implementer":
			if c.Vendor == "" {
				c.Vendor = v
			}
		case "cpu MHz":
			if c.MHz == 0 {
				c.MHz, _ = strconv.ParseFloat(v, 64)
			}
		case "physical id":
			phys = v
			sockets[v] = true
		case "core id":
			cores[phys+"/"+v] = true
		}
	}
	c.Sockets, c.PhysicalCores = max(len(sockets), 1), len(cores)
	if c.PhysicalCores == 0 {
		c.PhysicalCores = c.LogicalCores
	}
	return c
}

// parseOSRelease reads /etc/os-release: ID and VERSION_ID.
func parseOSRelease(s string) (id, version string) {
	for line := range strings.Lines(s) {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok {
			continue
		}
		v = strings.Trim(v, `"'`)
		switch k {
		case "ID":
			id = v
		case "VERSION_ID":
			version = v
		}
	}
	return
}

// parseLsblk reads `lsblk -b -d -n -P -o NAME,SIZE,ROTA,TYPE,MODEL`.
func parseLsblk(s string) []BlockDevice {
	var out []BlockDevice
	for line := range strings.Lines(s) {
		kv := pairs(line)
		size, _ := strconv.ParseUint(kv["SIZE"], 10, 64)
		if kv["TYPE"] != "disk" || size == 0 || skipBlock(kv["NAME"]) {
			continue
		}
		out = append(out, BlockDevice{Name: kv["NAME"], SizeBytes: size, Model: strings.TrimSpace(kv["MODEL"]), Rotational: kv["ROTA"] == "1"})
	}
	return out
}

// pairs reads KEY="value" pairs, as lsblk -P prints them.
func pairs(line string) map[string]string {
	m := map[string]string{}
	for {
		line = strings.TrimLeft(line, " \t\n")
		k, rest, ok := strings.Cut(line, `="`)
		if !ok {
			return m
		}
		v, after, ok := strings.Cut(rest, `"`)
		if !ok {
			return m
		}
		m[k], line = v, after
	}
}

// gpuQuery is what nvidia-smi is asked for, in this order.
const gpuQuery = "index,name,memory.total,memory.used,utilization.gpu,temperature.gpu,driver_version"

// parseNvidia reads nvidia-smi's CSV (noheader, nounits: MiB, percent,
// degrees C).
func parseNvidia(s string) []GPU {
	var out []GPU
	for line := range strings.Lines(s) {
		f := strings.Split(strings.TrimSpace(line), ",")
		if len(f) < 7 {
			continue
		}
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		idx, err := strconv.Atoi(f[0])
		if err != nil {
			continue
		}
		mib := func(v string) uint64 { x, _ := strconv.ParseFloat(v, 64); return uint64(x) << 20 }
		opt := func(v string) *float64 {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return nil // "[N/A]", "[Not Supported]"
			}
			return &x
		}
		out = append(out, GPU{Index: idx, Name: f[1], MemoryTotalBytes: mib(f[2]), MemoryUsedBytes: mib(f[3]),
			UtilizationPercent: opt(f[4]), TemperatureC: opt(f[5]), Driver: f[6]})
	}
	return out
}

// sortProcesses orders processes by memory, most first, then by PID.
func sortProcesses(ps []Process) {
	slices.SortFunc(ps, func(a, b Process) int {
		if c := cmp.Compare(b.RSSBytes, a.RSSBytes); c != 0 {
			return c
		}
		return cmp.Compare(a.PID, b.PID)
	})
}

// skipBlock reports whether a block device is left out of the disks: loop
// and RAM devices.
func skipBlock(name string) bool {
	return strings.HasPrefix(name, "loop") || strings.HasPrefix(name, "ram") || strings.HasPrefix(name, "zram")
}
