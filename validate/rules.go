package validate

// Rule IDs. They are part of the public contract: audit rows and
// configuration name them. The package documentation describes each.
const (
	RuleParseError          = "parse-error"
	RuleTooComplex          = "too-complex"
	RuleRecursiveDeleteRoot = "recursive-delete-root"
	RuleDiskFormat          = "disk-format"
	RuleRawDeviceWrite      = "raw-device-write"
	RuleCriticalFileWrite   = "critical-file-write"
	RuleAccountTamper       = "account-tamper"
	RuleSysfsWrite          = "sysfs-write"
	RuleRecursiveChmodRoot  = "recursive-chmod-root"
	RuleMoveRoot            = "move-root"
	RuleRemoteScript        = "remote-script"
	RuleHiddenCode          = "hidden-code"
	RuleForkBomb            = "fork-bomb"
	RulePowerState          = "power-state"
	RuleEnvironment         = "environment"
	RuleRawDeviceRead       = "raw-device-read"
	RuleSudo                = "sudo"
	RuleNotAllowlisted      = "not-allowlisted"
)

// Rule describes one rule of the policy.
type Rule struct {
	ID      string // stable kebab-case identifier
	Summary string // what the rule refuses
	Hint    string // what a caller can do instead
}

// ruleTable lists the rules in decreasing priority: when a command breaks
// several rules, the decision names the first one here.
var ruleTable = [...]Rule{
	{RuleParseError, "input the shell parser rejects, or that holds a NUL byte",
		"fix the shell syntax (quotes, brackets, here-document ends); pass exact arguments with argv instead of shell text"},
	{RuleTooComplex, "input nested or expanded beyond what the checker analyses",
		"split the command into simpler steps"},
	{RuleRecursiveDeleteRoot, "deleting a protected root or all of its entries: rm, find -delete/-exec, shred, rsync --delete",
		"delete a specific subdirectory instead (rm -rf ./build); guard variables with ${VAR:?} so an empty value aborts"},
	{RuleDiskFormat, "creating filesystems, partitioning and wiping disks: mkfs*, mke2fs, mkswap, fdisk, sfdisk, sgdisk, parted, wipefs, blkdiscard, …",
		"list disks read-only with lsblk, blkid or fdisk -l; ask an operator to partition or format"},
	{RuleRawDeviceWrite, "writing to a raw disk or kernel memory: redirections, dd of=, tee, cp, shred, …",
		"write to a regular file (dd of=./disk.img) and let an operator flash it"},
	{RuleCriticalFileWrite, "overwriting, deleting or replacing critical files: /etc/passwd, /etc/shadow, /etc/sudoers, the boot loader, …",
		"use the dedicated tools (useradd, passwd, visudo) or write a copy elsewhere for review"},
	{RuleAccountTamper, "deleting accounts, removing or batch-setting passwords, adding a second uid 0: userdel, deluser, passwd -d, usermod/useradd -o -u 0, chpasswd, …",
		"ask an operator to change accounts; read them with getent passwd or id"},
	{RuleSysfsWrite, "writing kernel settings under /sys or /proc/sys, by redirection, tee, cp, dd, sysctl -w, …",
		"read the setting (cat /sys/…, sysctl NAME) and ask an operator to change it"},
	{RuleRecursiveChmodRoot, "chmod, chown, chgrp, chattr or setfacl of a protected root recursively, or of all its entries",
		"change a specific subdirectory (chmod -R u+w ./build)"},
	{RuleMoveRoot, "moving or renaming a protected root or all of its entries",
		"move a specific file or subdirectory"},
	{RuleRemoteScript, "downloaded or decoded code run by a shell or interpreter: curl|sh, bash <(curl …), base64 -d|sh, sh -c \"$(curl …)\"",
		"download to a file, read it, then run it as a separate step"},
	{RuleHiddenCode, "code the checker cannot see: a name or arithmetic bash evaluates built from a value known only at run time (test -v \"$n\", $((y)) after read y, ${!ref}, ${x@P}), a program that reads its code from an input the call does not show",
		"use literal variable names and numbers; give a script as text (bash -c '…' or the stdin argument) so it can be checked"},
	{RuleForkBomb, "a function that calls itself in a background or pipeline (:(){ :|:& };:)",
		"bound the recursion or the number of processes"},
	{RulePowerState, "shutting down, rebooting, halting or suspending the machine: shutdown, reboot, halt, poweroff, init 0/6, systemctl poweroff, kill 1, sysrq",
		"ask an operator to change the power state"},
	{RuleRegistryDelete, "(Windows) deleting machine-wide registry keys or a user's hive root: reg delete HKLM\\…, Remove-Item HKLM:\\…",
		"change a key under HKCU\\Software\\<your app> instead, or ask an operator"},
	{RuleServiceDelete, "(Windows) removing a service: sc delete, Remove-Service",
		"stop it with sc stop or Stop-Service, or ask an operator"},
	{RuleBootConfig, "(Windows) changing the boot configuration: bcdedit /set, /delete, …",
		"read it with bcdedit /enum"},
	{RuleShadowCopyDelete, "(Windows) deleting shadow copies and backups: vssadmin delete shadows, wmic shadowcopy delete, wbadmin delete",
		"list them with vssadmin list shadows"},
	{RuleEnvironment, "environment variables that change what runs without the command showing it: BASH_ENV, LD_PRELOAD, NODE_OPTIONS, a PATH that puts other directories first, …",
		"set the variable inside the command, where it is checked, or leave it unset"},
	{RuleRawDeviceRead, "reading a raw disk or kernel memory (/dev/sda, /dev/mem, /proc/kcore)",
		"read files through the filesystem instead"},
	{RuleSudo, "sudo, doas, su, pkexec and run0 when the call does not allow privilege escalation",
		"run without privilege escalation, or make the call with sudo allowed"},
	{RuleNotAllowlisted, "in allow mode, a program that the allow list does not name, or whose name is only known at run time",
		"use a listed program, or add this one to the allow list"},
}

// Rules returns the rule table, in decreasing priority.
func Rules() []Rule {
	out := make([]Rule, len(ruleTable))
	copy(out, ruleTable[:])
	return out
}

func ruleIndex(id string) int {
	for i := range ruleTable {
		if ruleTable[i].ID == id {
			return i
		}
	}
	return -1
}
