package system

import (
	"reflect"
	"testing"
)

func TestParsers(t *testing.T) {
	sec := sections("==> /a <==\nx 1\n\n==> /b <==\ny\n")
	if sec["/a"] != "x 1\n\n" || sec["/b"] != "y\n" {
		t.Errorf("sections %q", sec)
	}
	mounts := parseMounts("/dev/sda1 / ext4 rw 0 0\n/dev/sdb1 /mnt/my\\040disk xfs rw 0 0\ntmpfs /run tmpfs rw 0 0\n")
	if mounts["/mnt/my disk"].fstype != "xfs" {
		t.Errorf("mounts %v", mounts)
	}
	df := parseDF("Filesystem 1024-blocks Used Available Capacity Mounted on\n"+
		"/dev/sda1 1000 400 500 45% /\n/dev/sdb1 2000 0 2000 0% /mnt/my disk\ntmpfs 100 0 100 0% /run\n", mounts)
	want := []DiskUsage{
		{Mount: "/", Device: "/dev/sda1", FSType: "ext4", TotalBytes: 1000 << 10, UsedBytes: 400 << 10, FreeBytes: 500 << 10, UsedPercent: 44.44},
		{Mount: "/mnt/my disk", Device: "/dev/sdb1", FSType: "xfs", TotalBytes: 2000 << 10, FreeBytes: 2000 << 10},
	}
	if !reflect.DeepEqual(df, want) {
		t.Errorf("df\n got %+v\nwant %+v", df, want)
	}
	gpus := parseNvidia("0, NVIDIA A100-SXM4-40GB, 40960, 1024, 37, 41, 550.54\n1, Tesla T4, 15360, 0, [N/A], [Not Supported], 550.54\n")
	if len(gpus) != 2 || gpus[0].MemoryTotalBytes != 40960<<20 || *gpus[0].UtilizationPercent != 37 || gpus[1].UtilizationPercent != nil || gpus[1].TemperatureC != nil {
		t.Errorf("gpus %+v", gpus)
	}
	ps := parsePS("  1  1000 0.0 init\n  2  5000 1.5 my proc\nbad line\n")
	if ps.Total != 2 || ps.Top[0].Name != "my proc" || ps.Top[0].RSSBytes != 5000<<10 {
		t.Errorf("ps %+v", ps)
	}
	a, n := parseStat("cpu  10 0 10 70 10 0 0 0 5 0\ncpu0 1 2 3 4 5\ncpu1 1 2 3 4 5\nintr 1\n")
	b, _ := parseStat("cpu  20 0 20 120 20 0 0 0 5 0\n")
	if n != 2 || a.total != 100 || a.idle != 80 || usedPercent(a, b) != 25 {
		t.Errorf("stat %+v %d %v", a, n, usedPercent(a, b))
	}
	bd := parseLsblk(`NAME="sda" SIZE="500107862016" ROTA="0" TYPE="disk" MODEL="Samsung SSD 860"` + "\n" + `NAME="loop0" SIZE="1" ROTA="0" TYPE="loop" MODEL=""` + "\n")
	if len(bd) != 1 || bd[0].Model != "Samsung SSD 860" || bd[0].SizeBytes != 500107862016 {
		t.Errorf("lsblk %+v", bd)
	}
}

// FuzzParsers: no parser panics on any input.
func FuzzParsers(f *testing.F) {
	f.Add("==> /proc/stat <==\ncpu 1 2 3 4\n", "Filesystem 1024-blocks Used Available Capacity Mounted on\n/dev/x 1 1 1 1% /\n")
	f.Add("/dev/a /m\\04 x 0 0\n", `NAME="a`)
	f.Fuzz(func(t *testing.T, a, b string) {
		for _, s := range []string{a, b} {
			sections(s)
			parseStat(s)
			memoryFrom(parseMeminfo(s))
			parseLoadavg(s)
			parseUptime(s)
			parseNetDev(s)
			parseDF(s, parseMounts(a))
			parsePS(s)
			parseCPUInfo(s)
			parseOSRelease(s)
			parseLsblk(s)
			parseNvidia(s)
			unescapeMount(s)
		}
	})
}
