// Package validate decides whether a shell command may run, and removes
// secrets from text before it leaves the gateway.
//
// # Overview
//
// A [Policy] checks shell text with [Policy.Check] and exact argument
// vectors with [Policy.CheckArgv], and returns a [Decision]: allowed or not,
// the ID of the rule that refused, a reason that names what was found and
// where, and a hint at what to do instead. [Decision.Err] turns a refusal
// into a *[DenyError].
//
// The check is not a list of regular expressions over the text. The command
// is parsed with mvdan.cc/sh/v3/syntax (bash dialect) and the whole syntax
// tree is walked: lists, pipelines, subshells, brace groups, if, while, for
// and case bodies, functions, command and process substitutions, and the
// payloads of sh -c (any shell, any flag order), eval, trap, here-documents
// and here-strings fed to a shell, and … | sh. Text that cannot be parsed is
// refused with the parser's message.
//
// Each word is resolved the way the shell would expand it: quotes are
// removed (\rm, "rm", 'r'm and $'\x72m' are all rm), braces expand
// ({/etc,/var} is two paths), known variables, arrays, positional parameters
// and ${IFS} are substituted, globs (/usr/bin/r?, /*) are kept as patterns and
// compared with the protected paths, and paths are cleaned (/etc/../etc,
// //). Quoted text is data: grep "rm -rf /" notes.txt is allowed. A value
// that is unknown until run time ($X, $(cmd)) is judged by what is known: it
// is assumed possibly empty, so rm -rf "$DIR/" is refused unless written
// "${DIR:?}/", but it is never assumed to be a protected path by itself. A
// command word that is itself unknown is refused only when the rest of the
// command is destructive ($X -rf /, $SUDO rm -rf /).
//
// Values flow through the program as the shell would carry them:
// assignments, for loops, read and mapfile from known input, printf -v,
// function arguments, the working directory (cd, cd -, pushd and popd, so
// cd / && rm -rf * is rm -rf /*), files that an earlier command wrote
// (echo / > list; xargs rm -rf < list) and scripts it wrote then ran (echo
// 'rm -rf /' > x; chmod +x x; ./x, by their #! line), symbolic links and
// bind mounts it made (ln -s / r; rm -rf r/*), and files it downloaded
// (curl -o i.sh …; sh i.sh). Names rebound earlier in the line are judged
// as what they run: hash -p /bin/rm ls, alias x='rm -rf' (always expanded,
// as sh does and bash with expand_aliases), and functions that shadow a
// command (function ls { rm -rf /; }; ls is judged as its body). A
// definition made in a branch, loop, subshell or pipeline may not hold, so
// the command is then judged both ways. [Options].Dir gives the starting
// directory.
//
// Wrappers are seen through: sudo, doas, env (assignments, -i, -u, -C, -S),
// command, exec, builtin, nice, nohup, setsid, timeout, time, stdbuf, ionice,
// chrt, taskset, chroot, nsenter, unshare, strace, systemd-run, flock, xargs
// (with the arguments it reads when they are known), busybox, find -exec,
// watch, ssh, parallel, at, crontab and more, as are options that run shell
// commands (git -c core.pager=…, ssh -o ProxyCommand=…, tar
// --to-command=…, sed's e command, vim -c '!…') and containers that mount a
// protected host directory read-write (docker run -v /:/host …). So are
// programs with a shell of their own: gdb and lldb (shell, !, call
// system(…), --args), make recipes and $(shell …) (make -f -, a Makefile
// written earlier, --eval), tmux and screen (new-session CMD, send-keys,
// stuff), ex, vim and ed scripts (:!, :w FILE), psql, mysql and sqlite3
// escapes, and man -P.
//
// Programs that write or delete through an option or operand are a table
// seeded like the destructive one: sed -i and w, perl -i, ruby -i, gawk -i
// inplace, tee, dd of=, cp, install, mv, sort -o, uniq IN OUT, split and
// csplit prefixes, xxd, iconv -o, openssl -out, dos2unix, strip, patch,
// tar -c -f, curl -o, wget -O, and the compressors that replace their
// input (gzip FILE, xz -r DIR, zstd --rm), zip -m, 7z -sdel, tar
// --remove-files and rsync --remove-source-files, judged against the
// protected roots, critical files and devices. Editors driven by a script
// that writes (ex -sc '%d|x' FILE, ed FILE <<< w) write their files.
//
// Inline interpreter code (python -c, perl -e, ruby -e, node -e, php -r,
// lua -e, Rscript -e, awk programs, Tcl on tclsh's stdin and expect -c, and
// the code of a script written earlier in the line) is searched for shell
// commands and program vectors handed to system(), exec and subprocess
// calls, which are judged as commands, and for literal paths handed to
// delete, write, rename and copy APIs (shutil.rmtree, os.remove, pathlib,
// Perl's open and unlink, FileUtils, fs.rmSync, R's unlink, Tcl's file
// delete), which are judged under the same rules as the shell forms. Code
// that forks in an endless loop is a fork bomb. That search is best
// effort: it sees literals, not computed values.
//
// Names and arithmetic that bash evaluates are judged as code: a subscript
// in a name that test -v, read, printf -v, declare, unset and their
// relatives take, or in arithmetic ($((…)), let, [[ a -eq b ]], indices),
// runs its command substitutions, and the value of a variable named in
// arithmetic is evaluated in turn; what cannot be resolved is refused with
// hidden-code. [Options].Stdin is judged as the code of a program that
// reads its program from standard input, and writes to shell, cron,
// systemd and SSH start-up files are judged by their content, like a
// crontab. docs/POLICY.md in the repository lists what is modelled and
// what is not.
//
// The environment of a command is checked apart, by [Policy.CheckEnv]:
// variables such as BASH_ENV, LD_PRELOAD or NODE_OPTIONS change what runs
// without the command text showing it.
//
// # What the parser cannot see
//
// The policy is a friendly first layer: it explains refusals and stops
// accidents and the obvious forms of abuse. It is not the boundary. A
// program decides at run time what it deletes (python3 -c "import os;
// os.system(os.environ['X'])", a compiled binary, a script written in an
// earlier call, a file fetched and run by the program itself), a value may
// come from the machine (a file's content, a command's output, the
// environment), and state lives beyond one line (a PATH entry, an alias in
// a start-up file, a cron job installed earlier). The kernel sandbox
// beneath the gateway (Landlock: read-only protected roots, no devices) is
// what holds when the parser is wrong; each rule here should be read as
// "refuses what it can see".
//
// # Rules
//
// Each rule has a stable ID that audit rows and configuration use. Every
// rule can be set to [Deny] (the default), [Confirm] or [Off] in
// [Policy.Rules], except that parse-error and too-complex cannot be
// switched off. When a command breaks several rules the decision names the
// first of this table.
//
//	ID                     refuses
//	parse-error            input the shell parser rejects, or that holds a NUL byte
//	too-complex            input nested or expanded beyond the checker's limits
//	recursive-delete-root  deleting a protected root or every entry of one: rm, find -delete/-exec, shred, rsync --delete
//	disk-format            mkfs*, mke2fs, mkswap, fdisk, sfdisk, sgdisk, gdisk, parted, wipefs -a, blkdiscard, nvme format, …
//	raw-device-write       writing a raw disk or kernel memory: >, tee, dd of=, cp, shred, badblocks -w
//	critical-file-write    overwriting, deleting or replacing /etc/passwd, /etc/shadow, /etc/sudoers, the boot loader, …
//	account-tamper         userdel, deluser, passwd -d, usermod/useradd -o -u 0, chpasswd, locking root, root:: written to a passwd file
//	sysfs-write            writing kernel settings under /sys or /proc/sys (>, tee, cp, sysctl -w, an interpreter's open)
//	recursive-chmod-root   chmod, chown, chgrp, chattr, setfacl -R of a protected root, or of all its entries
//	move-root              mv of a protected root or of all its entries
//	remote-script          downloaded or decoded code run by a shell or interpreter: curl|sh, bash <(curl …), base64 -d|sh
//	hidden-code            a name or arithmetic bash evaluates, or a program's code, that the checker cannot see: test -v "$n", $((y)) after read y, ${!ref}, ${x@P}
//	fork-bomb              a function that calls itself (by name or $FUNCNAME) in a background job or pipeline; fork in an endless loop
//	power-state            shutdown, reboot, halt, poweroff, init 0/6, systemctl poweroff, kill 1, kill -1, pkill -u root, sysrq, /sys/power
//	registry-delete        (Windows) reg delete of machine-wide keys or a hive root, Remove-Item HKLM:\…
//	service-delete         (Windows) sc delete, Remove-Service
//	boot-config            (Windows) bcdedit changes
//	shadow-copy-delete     (Windows) vssadmin delete shadows, wmic shadowcopy delete, wbadmin delete
//	environment            (CheckEnv) BASH_ENV, LD_PRELOAD, NODE_OPTIONS, exported functions, a PATH that shadows the system's, …
//	raw-device-read        reading a raw disk or kernel memory (cat /dev/sda, dd if=/dev/mem)
//	sudo                   sudo, doas, su, pkexec, run0 unless [Options].AllowSudo is set
//	not-allowlisted        in [ModeAllow], a program that [Policy].Allow does not list
//
// The protected roots, raw-device patterns and critical files are
// configuration: [Policy.ProtectedRoots], [Policy.Devices] and
// [Policy.CriticalFiles], with [DefaultProtectedRoots], [DefaultDevices]
// and [DefaultCriticalFiles] when nil.
//
// In [ModeAllow] only the programs in [Policy.Allow] may run, and every
// program counts: each command of a list or pipeline, the commands in
// substitutions and shell payloads, and wrappers such as env and xargs.
// Shell builtins that run nothing never need listing. The deny rules keep
// applying in allow mode.
//
// The package only reports what it found. Whether a caller may bypass the
// policy is a permission of the caller, decided by the gateway.
//
// Redacting secrets from output is package redact's job.
//
// # Read-only commands
//
// An allowed command is also classified: [Decision].ReadOnly is set when
// every program in it only observes — a conservative table (cat, ls, head,
// tail, wc, grep, stat, ps, df, du, id, uname, date without --set, find
// without -delete/-exec/-fprint…, sort without -o, git status/log/diff/
// show/…) — and nothing in the line writes or runs another program: no
// substitution, parameter expansion, glob or brace expansion, assignment,
// function, loop or background job, and no redirection but input, fd
// duplication and output to /dev/null. What it cannot see through is not
// read-only. readonly.go documents the table and what each entry refuses.
// The gateway's shell tool audits a read-only call with a single row and
// lets a read-only token run it.
//
// # Usage
//
// The zero Policy is the default policy:
//
//	var p validate.Policy
//	d := p.Check("rm -rf /", validate.Options{})
//	if err := d.Err(); err != nil {
//		return err // validate: refused by recursive-delete-root: …
//	}
//
// A gateway that runs commands without a shell checks the exact argv:
//
//	d := p.CheckArgv([]string{"bash", "-c", script}, validate.Options{Dir: cwd})
//
// A Policy holds no hidden state and Check never modifies it, so one value
// may serve every request concurrently. Check costs tens of microseconds
// for a typical command.
package validate
