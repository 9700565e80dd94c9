package validate

// commandTable maps command names to their checks. It is a constant table:
// never modified after initialisation.
var commandTable = map[string]handler{
	// Deleting.
	"rm":       (*walker).rm,
	"unlink":   (*walker).rm,
	"find":     (*walker).find,
	"rsync":    (*walker).rsync,
	"shred":    (*walker).shred,
	"truncate": (*walker).truncate,
	"mv":       (*walker).mv,

	// Permissions.
	"chmod":   (*walker).chperm,
	"chown":   (*walker).chperm,
	"chgrp":   (*walker).chperm,
	"chattr":  (*walker).chperm,
	"setfacl": (*walker).chperm,
	"chcon":   (*walker).chperm,

	// Writers.
	"cp":       (*walker).copyLike,
	"install":  (*walker).copyLike,
	"ln":       (*walker).copyLike,
	"dd":       (*walker).dd,
	"dcfldd":   (*walker).dd,
	"ddrescue": (*walker).ddrescue,
	"tee":      (*walker).tee,
	"sponge":   (*walker).tee,
	"sed":      (*walker).sed,
	"curl":     (*walker).curl,
	"wget":     (*walker).wget,
	"wget2":    (*walker).wget,

	// Disks.
	"mkfs": (*walker).disk, "mke2fs": (*walker).disk, "mkswap": (*walker).disk, "mkdosfs": (*walker).disk,
	"mkntfs": (*walker).disk, "mkexfatfs": (*walker).disk, "mkudffs": (*walker).disk, "mkreiserfs": (*walker).disk,
	"jfs_mkfs": (*walker).disk, "fdisk": (*walker).disk, "sfdisk": (*walker).disk, "gdisk": (*walker).disk,
	"sgdisk": (*walker).disk, "cgdisk": (*walker).disk, "cfdisk": (*walker).disk, "parted": (*walker).disk,
	"wipefs": (*walker).disk, "blkdiscard": (*walker).disk, "nvme": (*walker).disk, "diskutil": (*walker).disk,
	"zpool": (*walker).disk, "cryptsetup": (*walker).disk, "mdadm": (*walker).disk, "hdparm": (*walker).disk,
	"badblocks": (*walker).disk, "flashrom": (*walker).disk, "sg_format": (*walker).disk,
	"pvcreate": (*walker).disk, "pvremove": (*walker).disk, "vgremove": (*walker).disk, "lvremove": (*walker).disk,
	"gpart": (*walker).disk, "sysctl": (*walker).sysctl,
	"sg_write_same": (*walker).sgTool, "sg_unmap": (*walker).sgTool, "sg_sanitize": (*walker).sgTool,
	"sg_write_buffer": (*walker).sgTool, "sg_write_long": (*walker).sgTool, "sg_write_verify": (*walker).sgTool,
	"sg_write_x": (*walker).sgTool, "sg_compare_and_write": (*walker).sgTool, "sg_reassign": (*walker).sgTool,
	"sg_raw": (*walker).sgTool, "sg_dd": (*walker).sgTool, "sg_stream_ctl": (*walker).sgTool,
	"flash_erase": (*walker).sgTool, "flash_eraseall": (*walker).sgTool, "nandwrite": (*walker).sgTool,
	"mtd_debug": (*walker).sgTool, "flashcp": (*walker).sgTool, "ubiformat": (*walker).sgTool,

	// Power.
	"shutdown": (*walker).power, "reboot": (*walker).power, "halt": (*walker).power, "poweroff": (*walker).power,
	"init": (*walker).power, "telinit": (*walker).power, "systemctl": (*walker).power, "kexec": (*walker).power,
	"kill": (*walker).power, "killall5": (*walker).power, "loginctl": (*walker).power, "pmset": (*walker).power,

	// Programs with options that run shell commands.
	"tar": (*walker).tar, "bsdtar": (*walker).tar, "git": (*walker).git, "vim": (*walker).vim,
	"vi": (*walker).vim, "nvim": (*walker).vim, "ex": (*walker).vim, "view": (*walker).vim,
	"vim.basic": (*walker).vim, "vim.tiny": (*walker).vim, "ed": (*walker).ed, "red": (*walker).ed,
	"scp": (*walker).sshOpts, "sftp": (*walker).sshOpts, "alias": (*walker).alias,
	"killall": (*walker).power, "pkill": (*walker).power, "skill": (*walker).power,
	"busctl": (*walker).power, "dbus-send": (*walker).power, "gdbus": (*walker).power, "qdbus": (*walker).power,
	"gnome-session-quit": (*walker).power, "xfce4-session-logout": (*walker).power, "lxqt-leave": (*walker).power,
	"mate-session-save": (*walker).power, "rtcwake": (*walker).power, "pm-suspend": (*walker).power,
	"pm-hibernate": (*walker).power, "pm-suspend-hybrid": (*walker).power, "zzz": (*walker).power,
	"openrc-shutdown": (*walker).power, "uadmin": (*walker).power,

	// Accounts.
	"userdel": (*walker).account, "deluser": (*walker).account, "luserdel": (*walker).account,
	"groupdel": (*walker).account, "delgroup": (*walker).account, "lgroupdel": (*walker).account,
	"chpasswd": (*walker).account, "chgpasswd": (*walker).account, "newusers": (*walker).account,
	"vipw": (*walker).account, "vigr": (*walker).account, "passwd": (*walker).account,
	"usermod": (*walker).account, "useradd": (*walker).account, "adduser": (*walker).account,
	"lusermod": (*walker).account, "luseradd": (*walker).account, "pw": (*walker).account,
	"chage": (*walker).account, "dscl": (*walker).account, "sysadminctl": (*walker).account,
	"docker": (*walker).docker, "podman": (*walker).docker, "nerdctl": (*walker).docker,
	"nc": (*walker).netcat, "ncat": (*walker).netcat, "netcat": (*walker).netcat, "socat": (*walker).socat,

	// Programs with a shell of their own.
	"gdb": (*walker).gdb, "lldb": (*walker).gdb, "make": (*walker).make, "gmake": (*walker).make,
	"tmux": (*walker).tmux, "screen": (*walker).screen, "psql": (*walker).dbShell, "mysql": (*walker).dbShell,
	"mariadb": (*walker).dbShell, "sqlite3": (*walker).dbShell, "man": (*walker).man,

	// Readers of raw devices.
	"cat": (*walker).reader, "tac": (*walker).reader, "head": (*walker).reader, "tail": (*walker).reader,
	"od": (*walker).reader, "xxd": (*walker).outputs, "hexdump": (*walker).reader, "hd": (*walker).reader,
	"strings": (*walker).reader, "base64": (*walker).reader, "base32": (*walker).reader,
	"less": (*walker).pager, "more": (*walker).pager, "nl": (*walker).reader,

	// Programs that write or delete through options or operands (outSpecs).
	"sort": (*walker).outputs, "uniq": (*walker).outputs, "split": (*walker).outputs, "csplit": (*walker).outputs,
	"iconv": (*walker).outputs, "gpg": (*walker).outputs, "gpg2": (*walker).outputs, "openssl": (*walker).outputs,
	"dos2unix": (*walker).outputs, "unix2dos": (*walker).outputs, "mac2unix": (*walker).outputs, "unix2mac": (*walker).outputs,
	"strip": (*walker).outputs, "yq": (*walker).outputs, "patch": (*walker).outputs, "cpio": (*walker).outputs,
	"mkisofs": (*walker).outputs, "genisoimage": (*walker).outputs, "xorrisofs": (*walker).outputs, "e2image": (*walker).outputs,
	"ntfsclone": (*walker).outputs, "pv": (*walker).outputs, "gzip": (*walker).outputs, "gunzip": (*walker).outputs,
	"bzip2": (*walker).outputs, "bunzip2": (*walker).outputs, "xz": (*walker).outputs, "unxz": (*walker).outputs,
	"lzma": (*walker).outputs, "unlzma": (*walker).outputs, "lzip": (*walker).outputs, "plzip": (*walker).outputs,
	"pigz": (*walker).outputs, "unpigz": (*walker).outputs, "pbzip2": (*walker).outputs, "compress": (*walker).outputs,
	"uncompress": (*walker).outputs, "zstd": (*walker).outputs, "unzstd": (*walker).outputs, "lz4": (*walker).outputs,
	"brotli": (*walker).outputs, "lzop": (*walker).outputs,
	"zip": (*walker).zipRunner, "7z": (*walker).archiver, "7za": (*walker).archiver, "7zr": (*walker).archiver, "rar": (*walker).archiver,
	"rename": (*walker).rename, "prename": (*walker).rename, "file-rename": (*walker).rename, "perl-rename": (*walker).rename,
	"wipe": (*walker).rm, "srm": (*walker).rm,

	// Privilege.
	"sudo": (*walker).sudo, "doas": (*walker).sudo, "su": (*walker).sudo, "pkexec": (*walker).sudo,
	"run0": (*walker).sudo, "sudoedit": (*walker).sudo,

	// Shells and interpreters.
	"sh": (*walker).shell, "bash": (*walker).shell, "zsh": (*walker).shell, "dash": (*walker).shell,
	"ksh": (*walker).shell, "mksh": (*walker).shell, "ash": (*walker).shell, "yash": (*walker).shell,
	"rbash": (*walker).shell, "fish": (*walker).shell, "tcsh": (*walker).shell, "csh": (*walker).shell,
	"lksh": (*walker).shell, "pdksh": (*walker).shell, "posh": (*walker).shell, "oksh": (*walker).shell,
	"python": (*walker).interp, "perl": (*walker).interp, "ruby": (*walker).interp, "node": (*walker).interp,
	"nodejs": (*walker).interp, "bun": (*walker).interp, "php": (*walker).interp, "lua": (*walker).interp,
	"r": (*walker).interp, "rscript": (*walker).interp, "tclsh": (*walker).interp, "wish": (*walker).interp,
	"expect": (*walker).interp, "jimsh": (*walker).interp,
	"awk": (*walker).interp, "gawk": (*walker).interp, "mawk": (*walker).interp, "nawk": (*walker).interp,
	"eval": (*walker).eval, "source": (*walker).source, ".": (*walker).source, "trap": (*walker).trap,
	"at": (*walker).at, "batch": (*walker).at, "crontab": (*walker).crontab,

	// Wrappers.
	"exec": (*walker).wrapper, "command": (*walker).wrapper, "builtin": (*walker).wrapper,
	"env": (*walker).env, "xargs": (*walker).xargs, "busybox": (*walker).busybox, "toybox": (*walker).busybox,
	"watch": (*walker).watch, "ssh": (*walker).ssh, "parallel": (*walker).parallel,
	"nice": (*walker).wrapper, "nohup": (*walker).wrapper, "setsid": (*walker).wrapper, "timeout": (*walker).wrapper,
	"time": (*walker).wrapper, "stdbuf": (*walker).wrapper, "ionice": (*walker).wrapper, "chrt": (*walker).wrapper,
	"taskset": (*walker).wrapper, "chroot": (*walker).wrapper, "nsenter": (*walker).wrapper, "unshare": (*walker).wrapper,
	"setpriv": (*walker).wrapper, "numactl": (*walker).wrapper, "prlimit": (*walker).wrapper, "cgexec": (*walker).wrapper,
	"fakeroot": (*walker).wrapper, "faketime": (*walker).wrapper, "strace": (*walker).strace, "ltrace": (*walker).wrapper,
	"valgrind": (*walker).wrapper, "catchsegv": (*walker).wrapper, "unbuffer": (*walker).wrapper, "torsocks": (*walker).wrapper,
	"proxychains": (*walker).wrapper, "proxychains4": (*walker).wrapper, "systemd-run": (*walker).wrapper,
	"xvfb-run": (*walker).wrapper, "dbus-run-session": (*walker).wrapper, "gosu": (*walker).wrapper,
	"su-exec": (*walker).wrapper, "chpst": (*walker).wrapper, "nocache": (*walker).wrapper, "eatmydata": (*walker).wrapper,
	"flock": (*walker).wrapper, "script": (*walker).wrapper, "sg": (*walker).wrapper, "runuser": (*walker).wrapper,
	"entr": (*walker).wrapper, "nix-shell": (*walker).wrapper, "caffeinate": (*walker).wrapper, "firejail": (*walker).wrapper,
	"setarch": (*walker).wrapper, "linux32": (*walker).wrapper, "linux64": (*walker).wrapper, "rlwrap": (*walker).wrapper,
	"sem": (*walker).wrapper, "tsp": (*walker).wrapper, "daemonize": (*walker).wrapper, "start-stop-daemon": (*walker).wrapper,
	"poetry": (*walker).wrapper, "pipenv": (*walker).wrapper, "uv": (*walker).wrapper, "bundle": (*walker).wrapper,
	"conda": (*walker).wrapper, "mamba": (*walker).wrapper, "micromamba": (*walker).wrapper, "pnpm": (*walker).wrapper,
	"direnv": (*walker).wrapper, "dotenv": (*walker).wrapper, "with-contenv": (*walker).wrapper, "tini": (*walker).wrapper,
	"dumb-init": (*walker).wrapper,

	// Builtins that change the checker's state.
	"cd": (*walker).cd, "pushd": (*walker).cd, "popd": (*walker).cd,
	"read": (*walker).readVars, "mapfile": (*walker).readVars, "readarray": (*walker).readVars,
	"getopts": (*walker).readVars, "printf": (*walker).readVars,
	"unset": (*walker).unset, "shift": (*walker).shift, "set": (*walker).set,
	// Programs that run, write or delete through an option (runners.go).
	"gcc": (*walker).compiler, "cc": (*walker).compiler, "g++": (*walker).compiler, "c++": (*walker).compiler,
	"clang": (*walker).compiler, "clang++": (*walker).compiler, "cpp": (*walker).compiler, "tcc": (*walker).compiler,
	"npx": (*walker).npx, "npm": (*walker).npx, "gio": (*walker).trash, "trash-put": (*walker).trash,
	"trash": (*walker).trash, "gvfs-trash": (*walker).trash, "gvfs-rm": (*walker).trash,
	"sdiff": (*walker).outputs, "pod2man": (*walker).outputs, "pod2text": (*walker).outputs,
	"run-parts": (*walker).runParts, "pip": (*walker).pip, "pip3": (*walker).pip, "go": (*walker).goTool,

	"test": (*walker).testCmd, "[": (*walker).testCmd, "wait": (*walker).nameOperands,
	"hash": (*walker).hash, "unalias": (*walker).unalias, "mount": (*walker).mount,
}

// args returns the arguments after the command name.
func (inv *invocation) args() []field { return inv.argv[1:] }
