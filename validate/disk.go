package validate

import (
	"strings"
)

// disk checks filesystem, partitioning and wiping tools. Read-only forms
// (fdisk -l, parted -l, sgdisk -p, wipefs without -a) are allowed.
func (w *walker) disk(inv *invocation, name string) {
	args := inv.args()
	if onlyInfo(args) {
		return
	}
	p := parseArgs(args, &optSyntax{})
	base := name
	if inv.argv[0].exact() {
		base = inv.argv[0].s[strings.LastIndexByte(inv.argv[0].s, '/')+1:]
	}
	what := "creates a filesystem"
	sub := ""
	if len(p.ops) > 0 && p.ops[0].exact() {
		sub = p.ops[0].s
	}
	switch name {
	case "fdisk", "gdisk":
		if p.has("lhV", "list", "help", "version") {
			return
		}
		what = "partitions a disk"
	case "sfdisk":
		if p.has("ldsgVJFT", "list", "dump", "show-size", "show-geometry", "verify", "json", "list-free", "list-types") &&
			!p.has("NA", "delete", "reorder", "activate", "part-type", "part-label", "part-uuid", "part-attrs", "relocate", "move-data", "backup") {
			return
		}
		what = "partitions a disk"
	case "sgdisk":
		if p.has("P", "pretend") || !p.has("oZzndcgtxNcGCAmhu", "clear", "zap-all", "zap", "new", "delete", "change-name", "mbrtogpt", "typecode", "largest-new", "randomize-guids", "transform-bsd", "load-backup", "replicate", "move-second-header", "hybrid", "gpttombr", "attributes", "align-end", "partition-guid", "disk-guid") {
			return
		}
		what = "partitions a disk"
	case "cgdisk", "cfdisk":
		what = "partitions a disk"
	case "parted":
		if p.has("l", "list") {
			return
		}
		ro := len(p.ops) >= 1
		for _, c := range p.ops[min(1, len(p.ops)):] {
			if !c.exact() || (c.s != "print" && c.s != "p" && c.s != "unit" && c.s != "help" && c.s != "version" && c.s != "s" && c.s != "B" && c.s != "MiB" && c.s != "GiB" && c.s != "%" && c.s != "cyl" && c.s != "chs" && c.s != "compact") {
				ro = false
			}
		}
		if ro && len(p.ops) >= 2 {
			return
		}
		what = "partitions a disk"
	case "wipefs":
		if !p.has("ao", "all", "offset") {
			return
		}
		what = "wipes filesystem signatures"
	case "blkdiscard":
		what = "discards every block of a device"
	case "nvme":
		if !oneOf(sub, "format", "sanitize", "write-zeroes", "delete-ns", "detach-ns", "create-ns", "fw-download", "fw-commit", "write", "write-uncor", "dsm", "fw-activate") {
			return
		}
		what = "formats or erases an NVMe device"
	case "diskutil":
		if !strings.HasPrefix(strings.ToLower(sub), "erase") && !oneOf(sub, "zeroDisk", "randomDisk", "secureErase", "partitionDisk", "reformat", "apfs", "appleRAID", "cs", "splitPartition", "mergePartitions", "resizeVolume", "addPartition") {
			return
		}
		if sub == "apfs" && (len(p.ops) < 2 || !p.ops[1].exact() || !oneOf(p.ops[1].s, "deleteContainer", "deleteVolume", "eraseVolume", "createContainer", "resizeContainer", "deleteVolumeGroup")) {
			return
		}
		what = "erases or partitions a disk"
	case "zpool":
		if !oneOf(sub, "destroy", "labelclear", "create", "split") {
			return
		}
		what = "destroys or creates a storage pool"
	case "cryptsetup":
		found := false
		for _, o := range p.ops {
			if o.exact() && oneOf(o.s, "luksFormat", "erase", "luksErase", "reencrypt", "tcryptDump", "luksKillSlot", "luksRemoveKey") {
				found = true
			}
		}
		if !found {
			return
		}
		what = "formats or erases an encrypted volume"
	case "mdadm":
		if !p.has("CB", "create", "zero-superblock", "build") {
			return
		}
		what = "creates a RAID array or wipes its superblock"
	case "hdparm":
		if !p.hasLong("security-erase", 10) && !p.hasLong("security-erase-enhanced", 10) && !p.hasLong("trim-sector-ranges", 6) &&
			!p.hasLong("security-set-pass", 12) && !p.hasLong("dco-restore", 5) &&
			!p.hasLong("write-sector", 7) && !p.hasLong("make-bad-sector", 6) && !p.hasLong("fwdownload", 5) {
			return
		}
		what = "erases or writes a disk through ATA commands"
	case "badblocks":
		if p.hasShort('w') {
			w.report(inv, RuleRawDeviceWrite, "badblocks -w overwrites every block of "+opsShow(p.ops))
		}
		return
	case "flashrom":
		if !p.has("wEe", "write", "erase") {
			return
		}
		what = "rewrites firmware"
	case "pvcreate", "pvremove", "vgremove", "lvremove":
		what = "creates or removes LVM volumes"
	case "gpart":
		if !oneOf(sub, "create", "destroy", "delete", "add", "resize") {
			return
		}
		what = "partitions a disk"
	case "mkswap":
		what = "creates a swap area"
	case "sg_format":
		what = "formats a SCSI disk"
	}
	if inv.dyn && len(p.ops) == 0 {
		return
	}
	msg := base + " " + what
	if len(p.ops) > 0 {
		msg += " (" + opsShow(p.ops) + at(p.ops[0].pos) + ")"
	} else if len(inv.argv) > 0 {
		msg += at(inv.argv[0].pos)
	}
	w.report(inv, RuleDiskFormat, msg)
}

func opsShow(ops []field) string {
	var parts []string
	for i, o := range ops {
		if i == 3 {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, o.show())
	}
	return strings.Join(parts, " ")
}

func oneOf(s string, list ...string) bool {
	for _, l := range list {
		if s == l {
			return true
		}
	}
	return false
}

// sgWriters are sg3_utils and MTD tools that write, erase or reprogram a
// device directly (rule raw-device-write).
var sgWriters = map[string]string{
	"sg_write_same": "writes blocks of", "sg_unmap": "discards blocks of", "sg_sanitize": "erases",
	"sg_write_buffer": "rewrites the firmware of", "sg_write_long": "writes blocks of", "sg_write_verify": "writes blocks of",
	"sg_write_x": "writes blocks of", "sg_compare_and_write": "writes blocks of", "sg_reassign": "reassigns blocks of",
	"sg_raw": "sends raw commands to", "sg_dd": "copies onto", "sg_stream_ctl": "changes streams of",
	"flash_erase": "erases", "flash_eraseall": "erases", "nandwrite": "writes", "mtd_debug": "writes or erases",
	"flashcp": "writes", "ubiformat": "formats",
}

// sgTool refuses the raw SCSI and flash writers; sg_dd is judged by its of=.
func (w *walker) sgTool(inv *invocation, name string) {
	args := inv.args()
	if onlyInfo(args) {
		return
	}
	if name == "sg_dd" {
		w.dd(inv, name)
		return
	}
	if name == "mtd_debug" && (len(args) == 0 || !args[0].exact() || !oneOf(args[0].s, "write", "erase")) {
		return
	}
	p := parseArgs(args, &optSyntax{})
	if len(p.ops) == 0 {
		return
	}
	w.report(inv, RuleRawDeviceWrite, name+" "+sgWriters[name]+" the device "+opsShow(p.ops)+at(p.ops[0].pos))
}

// sysctl refuses setting kernel parameters (sysctl -w NAME=VALUE, -p
// FILE); reading them is allowed.
func (w *walker) sysctl(inv *invocation, name string) {
	p := parseArgs(inv.args(), &optSyntax{argShort: "p", argLong: []string{"pattern"}})
	for _, o := range p.ops {
		if o.exact() && strings.Contains(o.s, "=") || p.has("w", "write") {
			w.report(inv, RuleSysfsWrite, "sysctl sets the kernel parameter "+o.show()+at(o.pos))
			return
		}
	}
	if f, ok := p.val('p', "load"); ok || p.has("p", "load", "system") {
		w.report(inv, RuleSysfsWrite, "sysctl loads kernel parameters from "+f.show()+at(inv.argv[0].pos))
	}
}
