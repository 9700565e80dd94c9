package validate_test

import (
	"os"
	"strings"
	"testing"

	"github.com/rigout/rigout/validate"
)

// The tables below cover the commands of issue 12 that destroy or disable
// a machine without looking like rm -rf /, each group with the near misses
// that must stay allowed. They seed FuzzCheck like checkCases.

const (
	rAcct  = validate.RuleAccountTamper
	rSysfs = validate.RuleSysfsWrite
	rEnv   = validate.RuleEnvironment
)

// accountCases: tools that delete accounts, remove passwords or add a
// second root.
var accountCases = []checkCase{
	{cmd: "userdel root", rule: rAcct},
	{cmd: "userdel -r bob", rule: rAcct},
	{cmd: "deluser bob", rule: rAcct},
	{cmd: "sudo userdel -f root", sudo: true, rule: rAcct},
	{cmd: "groupdel sudo", rule: rAcct},
	{cmd: "passwd -d root", rule: rAcct},
	{cmd: "passwd --delete bob", rule: rAcct},
	{cmd: "passwd -l root", rule: rAcct},
	{cmd: "usermod -o -u 0 bob", rule: rAcct},
	{cmd: "usermod -u 0 bob", rule: rAcct},
	{cmd: "useradd -o -u 0 -g 0 toor", rule: rAcct},
	{cmd: "useradd --uid=0 toor", rule: rAcct},
	{cmd: "usermod -p '' bob", rule: rAcct},
	{cmd: "usermod -L root", rule: rAcct},
	{cmd: "usermod -s /usr/sbin/nologin root", rule: rAcct},
	{cmd: "echo 'root:x' | chpasswd", rule: rAcct},
	{cmd: "chpasswd < users.txt", rule: rAcct},
	{cmd: "newusers batch.txt", rule: rAcct},
	{cmd: "pw useradd toor -o -u 0", rule: rAcct},
	{cmd: "dscl . -delete /Users/bob", rule: rAcct},
	{cmd: "echo 'toor:x:0:0::/root:/bin/sh' > /mnt/etc/passwd", rule: rAcct},
	{cmd: "printf 'root::0:0::/root:/bin/sh\\n' > ./rootfs/etc/passwd", rule: rAcct},
	{cmd: "echo 'root::0:0::/root:/bin/bash' >> /etc/passwd", rule: rCrit},
	{cmd: "bash -c 'userdel bob'", rule: rAcct},
	// Near misses.
	{cmd: "id bob"},
	{cmd: "getent passwd bob"},
	{cmd: "useradd -m -s /bin/bash bob"},
	{cmd: "adduser --disabled-password bob"},
	{cmd: "usermod -aG docker bob"},
	{cmd: "usermod -s /bin/zsh bob"},
	{cmd: "deluser bob docker"},
	{cmd: "passwd"},
	{cmd: "passwd -S bob"},
	{cmd: "chage -l bob"},
	{cmd: "userdel --help"},
	{cmd: "echo 'bob:x:1000:1000::/home/bob:/bin/sh' > ./rootfs/etc/passwd"},
	{cmd: "grep root /etc/passwd"},
}

// powerCases: power-off and kill-everything by other paths.
var powerCases = []checkCase{
	{cmd: "systemctl halt", rule: rPower},
	{cmd: "systemctl kexec", rule: rPower},
	{cmd: "systemctl hibernate", rule: rPower},
	{cmd: "systemctl suspend", rule: rPower},
	{cmd: "systemctl isolate rescue.target", rule: rPower},
	{cmd: "telinit 0", rule: rPower},
	{cmd: "telinit 6", rule: rPower},
	{cmd: "echo o > /proc/sysrq-trigger", rule: rPower},
	{cmd: "echo b | tee /proc/sysrq-trigger", rule: rPower},
	{cmd: "echo c > /proc/sysrq-trigger", rule: rPower},
	{cmd: "echo mem > /sys/power/state", rule: rPower},
	{cmd: "kill -9 1", rule: rPower},
	{cmd: "kill -9 -1", rule: rPower},
	{cmd: "kill -KILL -1", rule: rPower},
	{cmd: "kill -s KILL -- -1", rule: rPower},
	{cmd: "pkill -9 -1", rule: rPower},
	{cmd: "pkill -KILL -u root", rule: rPower},
	{cmd: "pkill -9 .", rule: rPower},
	{cmd: "pkill -9 -v nonexistent", rule: rPower},
	{cmd: "killall -9 -u root", rule: rPower},
	{cmd: "killall5 -9", rule: rPower},
	{cmd: "killall -9 systemd", rule: rPower},
	{cmd: "busybox halt", rule: rPower},
	{cmd: "busybox poweroff -f", rule: rPower},
	{cmd: "busctl call org.freedesktop.login1 /org/freedesktop/login1 org.freedesktop.login1.Manager PowerOff b false", rule: rPower},
	{cmd: "dbus-send --system --print-reply --dest=org.freedesktop.login1 /org/freedesktop/login1 org.freedesktop.login1.Manager.Reboot boolean:true", rule: rPower},
	{cmd: "rtcwake -m off -s 60", rule: rPower},
	{cmd: "gnome-session-quit --power-off --force", rule: rPower},
	{cmd: "pm-suspend", rule: rPower},
	// Near misses.
	{cmd: "kill 0"},
	{cmd: "pgrep -v x"},
	{cmd: "kill -9 0"},
	{cmd: "kill -9 12345"},
	{cmd: "kill -l"},
	{cmd: "pkill -f 'node server.js'"},
	{cmd: "pkill -1 nginx"},
	{cmd: "killall node"},
	{cmd: "pkill -u bob -f jupyter"},
	{cmd: "systemctl isolate multi-user.target"},
	{cmd: "systemctl status sshd"},
	{cmd: "systemctl restart nginx"},
	{cmd: "busctl list"},
	{cmd: "rtcwake -m show"},
	{cmd: "cat /sys/power/state"},
}

// kernelCases: writes under /sys and /proc/sys, and raw devices written
// through other programs.
var kernelCases = []checkCase{
	{cmd: "echo 1 > /sys/class/leds/input0::capslock/brightness", rule: rSysfs},
	{cmd: "echo 1 | tee /sys/kernel/mm/ksm/run", rule: rSysfs},
	{cmd: "echo 0 > /sys/devices/system/cpu/cpu1/online", rule: rSysfs},
	{cmd: "echo 1 > /sys/block/sda/device/delete", rule: rSysfs},
	{cmd: "echo 1 > /proc/sys/kernel/panic", rule: rSysfs},
	{cmd: "cp bad.conf /sys/module/x/parameters/y", rule: rSysfs},
	{cmd: "sysctl -w vm.overcommit_memory=2", rule: rSysfs},
	{cmd: "sysctl kernel.panic=1", rule: rSysfs},
	{cmd: "python3 -c \"open('/sys/class/net/eth0/mtu','w').write('1')\"", rule: rSysfs},
	{cmd: "cat disk.img > /dev/sda", rule: rDevW},
	{cmd: "pv disk.img > /dev/sda", rule: rDevW},
	{cmd: "ddrescue disk.img /dev/sda", rule: rDevW},
	{cmd: "cp disk.img /dev/sda", rule: rDevW},
	{cmd: "tee /dev/nvme0n1 < disk.img", rule: rDevW},
	{cmd: "sg_write_same --16 --lba=0 --num=1000 /dev/sg0", rule: rDevW},
	{cmd: "sg_unmap --lba=0 --num=100 /dev/sda", rule: rDevW},
	{cmd: "sg_sanitize --crypto /dev/sg1", rule: rDevW},
	{cmd: "sg_dd if=/dev/zero of=/dev/sg0", rule: rDevW},
	{cmd: "flash_erase /dev/mtd0 0 0", rule: rDevW},
	{cmd: "sg_format --format /dev/sg0", rule: rFmt},
	{cmd: "hdparm --user-master u --security-erase p /dev/sda", rule: rFmt},
	{cmd: "hdparm --security-set-pass p /dev/sda", rule: rFmt},
	{cmd: "nvme format /dev/nvme0n1", rule: rFmt},
	{cmd: "nvme write-zeroes /dev/nvme0n1 -s 0 -c 100", rule: rFmt},
	// Near misses.
	{cmd: "cat /sys/class/net/eth0/address"},
	{cmd: "grep . /sys/block/*/queue/rotational"},
	{cmd: "sysctl -a"},
	{cmd: "sysctl kernel.hostname"},
	{cmd: "sg_inq /dev/sda"},
	{cmd: "hdparm -I /dev/sda"},
	{cmd: "nvme list"},
	{cmd: "nvme smart-log /dev/nvme0"},
	{cmd: "echo 1 > ./sys/value"},
	{cmd: "cp disk.img ./disk-copy.img"},
}

// forkCases: fork bombs in interpreters and through $FUNCNAME.
var forkCases = []checkCase{
	{cmd: "f(){ $FUNCNAME|$FUNCNAME& };f", rule: rBomb},
	{cmd: `f(){ "${FUNCNAME[0]}" | "${FUNCNAME[0]}" & }; f`, rule: rBomb},
	{cmd: "perl -e 'fork while 1'", rule: rBomb},
	{cmd: "perl -e 'fork while fork'", rule: rBomb},
	{cmd: "python3 -c $'import os\\nwhile 1: os.fork()'", rule: rBomb},
	{cmd: "python3 -c 'import os\nwhile True:\n    os.fork()'", rule: rBomb},
	{cmd: "ruby -e 'loop { fork }'", rule: rBomb},
	{cmd: "node -e 'while(1) require(\"child_process\").fork(__filename)'", rule: rBomb},
	{cmd: "php -r 'while(true) pcntl_fork();'", rule: rBomb},
	// Near misses.
	{cmd: "f(){ echo $FUNCNAME; }; f"},
	{cmd: "python3 -c 'import os; pid = os.fork()'"},
	{cmd: "python3 -c $'import os\\nfor i in range(4): os.fork()'"},
	{cmd: "perl -e 'my $pid = fork; waitpid($pid, 0)'"},
	{cmd: "python3 -c 'while True: print(1)'"},
}

// writerCases: programs that write or delete through an output or in-place
// option, archivers that delete their input, editors driven by a script.
var writerCases = []checkCase{
	{cmd: "sed -i s/root/x/ /etc/passwd", rule: rCrit},
	{cmd: "sed 's/x/y/w /etc/passwd' notes.txt", rule: rCrit},
	{cmd: "sed -n 'w /etc/shadow' notes.txt", rule: rCrit},
	{cmd: "perl -i -pe s/x/y/ /etc/shadow", rule: rCrit},
	{cmd: "perl -pi -e 's/x/y/' /etc/passwd", rule: rCrit},
	{cmd: "ruby -i -pe 'gsub(/x/,\"y\")' /etc/passwd", rule: rCrit},
	{cmd: "gawk -i inplace '{print}' /etc/passwd", rule: rCrit},
	{cmd: "tee /etc/passwd < x", rule: rCrit},
	{cmd: "dd if=x of=/etc/shadow", rule: rCrit},
	{cmd: "cp x /etc/passwd", rule: rCrit},
	{cmd: "install -m 644 x /etc/sudoers", rule: rCrit},
	{cmd: "mv x /etc/passwd", rule: rCrit},
	{cmd: "tar --remove-files -cf /tmp/x.tar /etc", rule: rDel},
	{cmd: "tar -cf /dev/sda /etc", rule: rDevW},
	{cmd: "tar cf /dev/nvme0n1 /home", rule: rDevW},
	{cmd: "zip -m -r x.zip /etc", rule: rDel},
	{cmd: "zip -rm x.zip /usr", rule: rDel},
	{cmd: "zip -m x.zip /etc/passwd", rule: rCrit},
	{cmd: "7z a -sdel x.7z /etc", rule: rDel},
	{cmd: "gzip -r /etc", rule: rDel},
	{cmd: "gzip /etc/passwd", rule: rCrit},
	{cmd: "gzip /usr/bin/*", rule: rDel},
	{cmd: "bzip2 /etc/shadow", rule: rCrit},
	{cmd: "xz -r /usr", rule: rDel},
	{cmd: "zstd --rm /etc/passwd", rule: rCrit},
	{cmd: "rsync -a --remove-source-files /etc/ /tmp/x", rule: rDel},
	{cmd: "truncate -s0 /etc/passwd", rule: rCrit},
	{cmd: "shred /etc/passwd", rule: rCrit},
	{cmd: "wipe -rf /", rule: rDel},
	{cmd: "sort -o /etc/passwd x", rule: rCrit},
	{cmd: "sort --output=/etc/shadow x", rule: rCrit},
	{cmd: "uniq x /etc/passwd", rule: rCrit},
	{cmd: "xxd -r dump /etc/passwd", rule: rCrit},
	{cmd: "curl -o /etc/passwd http://example.com/x", rule: rCrit},
	{cmd: "wget -O /etc/passwd http://example.com/x", rule: rCrit},
	{cmd: "split -b 1 x /etc/sudoers.d/", rule: rCrit},
	{cmd: "split --filter='rm -rf /' big.bin", rule: rDel},
	{cmd: "dos2unix /etc/passwd", rule: rCrit},
	{cmd: "strip /bin/bash", rule: rCrit},
	{cmd: "openssl enc -in x -out /etc/shadow", rule: rCrit},
	{cmd: "iconv -f utf8 -t ascii -o /etc/passwd x", rule: rCrit},
	{cmd: "patch /etc/passwd fix.diff", rule: rCrit},
	{cmd: "rename 's/$/.bak/' /etc/passwd", rule: rCrit},
	{cmd: "ex -sc '%d|x' /etc/passwd", rule: rCrit},
	{cmd: "vim -es -c 'wq' /etc/shadow", rule: rCrit},
	{cmd: "vim -c 'w /etc/passwd' notes.txt", rule: rCrit},
	{cmd: "vim -c '%!rm -rf /' notes.txt", rule: rDel},
	{cmd: "ed -s /etc/passwd <<<$',d\\nw'", rule: rCrit},
	{cmd: "printf ',d\\nw\\n' | ed /etc/passwd", rule: rCrit},
	{cmd: "ed -s /etc/passwd < script.ed", rule: rCrit},
	{cmd: "echo '!rm -rf /' | ed", rule: rDel},
	{cmd: "find /etc -delete", rule: rDel},
	// Near misses.
	{cmd: "sed -i s/a/b/ ./local.txt"},
	{cmd: "sed -n 's/x/y/gw out.txt' notes.txt"},
	{cmd: "perl -i.bak -pe 's/x/y/' ./local.txt"},
	{cmd: "awk -i inplace '{print}' notes.txt"},
	{cmd: "tar czf backup.tgz /etc"},
	{cmd: "tar -xf x.tar"},
	{cmd: "cp /etc/passwd /tmp/x"},
	{cmd: "zip -r backup.zip /etc"},
	{cmd: "7z a x.7z /etc"},
	{cmd: "gzip build.log"},
	{cmd: "gzip -k /etc/passwd"},
	{cmd: "gzip -c /etc/passwd > passwd.gz"},
	{cmd: "zstd /etc/passwd"},
	{cmd: "sort -o sorted.txt x"},
	{cmd: "sort /etc/passwd"},
	{cmd: "uniq /etc/passwd"},
	{cmd: "split -b 100 big.bin chunk_"},
	{cmd: "dos2unix notes.txt"},
	{cmd: "dos2unix -n /etc/passwd /tmp/x"},
	{cmd: "strip -o /tmp/x /bin/bash"},
	{cmd: "patch -p1 < fix.diff"},
	{cmd: "rename 's/x/y/' *.txt"},
	{cmd: "ex -sc '%p|q' /etc/passwd"},
	{cmd: "ed -s /etc/passwd <<<$',p\\nq'"},
	{cmd: "vim /etc/passwd"},
	{cmd: "xxd /bin/ls | head"},
}

// interpCases: the delete and write APIs of interpreters given literal
// paths, and literal commands handed to system() and exec calls.
var interpCases = []checkCase{
	{cmd: `python3 -c "import shutil; shutil.rmtree('/')"`, rule: rDel},
	{cmd: `python3 -c "import shutil, pathlib; shutil.rmtree(pathlib.Path('/etc'))"`, rule: rDel},
	{cmd: `python3 -c "import os; os.remove('/etc/passwd')"`, rule: rCrit},
	{cmd: `python3 -c "import os; os.system('rm -rf /')"`, rule: rDel},
	{cmd: `python3 -c "import subprocess; subprocess.run(['rm','-rf','/'])"`, rule: rDel},
	{cmd: `python3 -c "import subprocess; subprocess.call('mkfs.ext4 /dev/sda', shell=True)"`, rule: rFmt},
	{cmd: `python3 -c "import pathlib; pathlib.Path('/etc/passwd').unlink()"`, rule: rCrit},
	{cmd: `python3 -c "from pathlib import Path; Path('/etc/shadow').write_text('')"`, rule: rCrit},
	{cmd: `python3 -c "import os; os.rename('/etc/passwd','/tmp/p')"`, rule: rCrit},
	{cmd: `python3 -c "import shutil; shutil.move('/usr', '/tmp/usr')"`, rule: rMove},
	{cmd: `python3 -c "import shutil; shutil.copy('x', '/etc/sudoers')"`, rule: rCrit},
	{cmd: `python3 -c "import os; os.open('/dev/sda', os.O_WRONLY)"`, rule: rDevW},
	{cmd: `python3 -c "open('/dev/nvme0n1','wb').write(b'0')"`, rule: rDevW},
	{cmd: `ruby -e 'File.open("/proc/sysrq-trigger","w") { |f| f.write("b") }'`, rule: rPower},
	{cmd: `python3 -c "import os; os.system('userdel root')"`, rule: rAcct},
	{cmd: `perl -e 'use File::Path qw(remove_tree); remove_tree("/etc")'`, rule: rDel},
	{cmd: `perl -MFile::Path -e 'rmtree("/")'`, rule: rDel},
	{cmd: `perl -e 'unlink "/etc/passwd"'`, rule: rCrit},
	{cmd: `perl -e 'system("rm","-rf","/")'`, rule: rDel},
	{cmd: `perl -e 'open(F,">/etc/passwd")'`, rule: rCrit},
	{cmd: `perl -e 'open my $f, ">>", "/etc/shadow"'`, rule: rCrit},
	{cmd: `perl -e 'open(F, "| rm -rf /")'`, rule: rDel},
	{cmd: `perl -e 'rename "/etc", "/etc.old"'`, rule: rMove},
	{cmd: `ruby -e 'require "fileutils"; FileUtils.rm_rf("/")'`, rule: rDel},
	{cmd: `ruby -e 'File.write("/etc/passwd","")'`, rule: rCrit},
	{cmd: `ruby -e 'FileUtils.mv("/boot", "/tmp")'`, rule: rMove},
	{cmd: `node -e "require('fs').rmSync('/', {recursive:true})"`, rule: rDel},
	{cmd: `node -e "require('child_process').execSync('rm -rf /')"`, rule: rDel},
	{cmd: `node -e "require('fs').renameSync('/etc/shadow', 'x')"`, rule: rCrit},
	{cmd: `node -e "require('fs').copyFileSync('x', '/etc/passwd')"`, rule: rCrit},
	{cmd: "tclsh <<< 'file delete -force /'", rule: rDel},
	{cmd: "echo 'file delete /etc/passwd' | tclsh", rule: rCrit},
	{cmd: "echo 'exec rm -rf /' | tclsh", rule: rDel},
	{cmd: "echo 'set f [open /etc/passwd w]' | tclsh8.6", rule: rCrit},
	{cmd: `expect -c 'spawn rm -rf /'`, rule: rDel},
	{cmd: `Rscript -e "unlink('/', recursive=TRUE)"`, rule: rDel},
	{cmd: `Rscript -e "system('rm -rf /')"`, rule: rDel},
	{cmd: `Rscript -e "system2('rm', c('-rf', '/'))"`, rule: rDel},
	{cmd: `Rscript -e "file.remove('/etc/passwd')"`, rule: rCrit},
	{cmd: `R -e "writeLines('root::0:0::/root:/bin/sh', '/etc/passwd')"`, rule: rCrit},
	{cmd: `echo "unlink('/etc', recursive = TRUE)" | R --no-save`, rule: rDel},
	{cmd: `php -r 'rename("/etc/passwd", "/tmp/x");'`, rule: rCrit},
	{cmd: `php -r 'copy("x", "/etc/shadow");'`, rule: rCrit},
	{cmd: `lua -e 'os.rename("/etc/passwd", "x")'`, rule: rCrit},
	// Near misses.
	{cmd: "python3 -c 'print(1)'"},
	{cmd: `python3 -c "import shutil; shutil.rmtree('build')"`},
	{cmd: `python3 -c "import os; os.rename('a.txt', 'b.txt')"`},
	{cmd: `python3 -c "print('/etc'.replace('/etc', '/x'))"`},
	{cmd: `python3 -c "from pathlib import Path; print(Path('/etc/passwd').read_text())"`},
	{cmd: `perl -e 'open(F, "<", "/etc/passwd")'`},
	{cmd: `python3 -c "import os; fd = os.open('/etc/passwd', os.O_RDONLY)"`},
	{cmd: `perl -ne 'print if /root/' /etc/passwd`},
	{cmd: `ruby -e 'puts File.read("/etc/passwd")'`},
	{cmd: `node -e "console.log(require('fs').readFileSync('/etc/passwd', 'utf8'))"`},
	{cmd: "echo 'puts hello' | tclsh"},
	{cmd: `Rscript -e "unlink('tmp.txt')"`},
	{cmd: `Rscript -e "writeLines('x', 'out.txt')"`},
	{cmd: `php -r 'echo file_get_contents("/etc/hostname");'`},
}

// stateCases: state carried across the commands of one line: the working
// directory, names rebound by hash, alias and functions, files written then
// run, links made then followed, and programs with a shell of their own.
var stateCases = []checkCase{
	{cmd: "cd /etc && rm -rf *", rule: rDel},
	{cmd: "cd / ; rm -rf ./*", rule: rDel},
	{cmd: "cd /usr; cd bin; rm -rf *", rule: rDel},
	{cmd: "cd /etc; cd /tmp; cd -; rm -rf *", rule: rDel},
	{cmd: "cd /tmp; cd -; rm -rf *", dir: "/", rule: rDel},
	{cmd: "cd ~ && rm -rf *", rule: rDel},
	{cmd: "pushd /etc && rm -rf *", rule: rDel},
	{cmd: "pushd /etc; pushd /tmp; popd; rm -rf *", rule: rDel},
	{cmd: "CDPATH=/ ; cd etc && rm -rf *", rule: rDel},
	{cmd: "export CDPATH=/usr; cd bin; rm -rf *", rule: rDel},
	{cmd: "echo 'rm -rf /' > x.sh; cp x.sh run.sh; ./run.sh", rule: rDel},
	{cmd: "hash -p /bin/rm ls; ls -rf /", rule: rDel},
	{cmd: "hash -p /bin/bash ls; ls -c 'rm -rf /'", rule: rDel},
	{cmd: "shopt -s expand_aliases\nalias x='rm -rf'\nx /", rule: rDel},
	{cmd: "alias x='rm -rf'; x /", rule: rDel},
	{cmd: "alias cdx='cd /etc'; cdx; rm -rf *", rule: rDel},
	{cmd: "function ls { rm -rf /; }; ls", rule: rDel},
	{cmd: "if false; then rm() { :; }; fi; rm -rf /", rule: rDel},
	{cmd: "cd() { builtin cd /etc; }; cd x; rm -rf *", rule: rDel},
	{cmd: "echo 'rm -rf /' > x.sh; sh x.sh", rule: rDel},
	{cmd: "echo 'rm -rf /' > x.sh; chmod +x x.sh; ./x.sh", rule: rDel},
	{cmd: "cat > f <<EOF\nrm -rf /\nEOF\nbash f", rule: rDel},
	{cmd: "cat > f <<EOF\nrm -rf /\nEOF\nchmod +x f; ./f", rule: rDel},
	{cmd: "printf '#!/usr/bin/env python3\\nimport shutil; shutil.rmtree(\"/\")\\n' > x; chmod +x x; ./x", rule: rDel},
	{cmd: "tee x.sh <<< 'rm -rf /'; sh x.sh", rule: rDel},
	{cmd: "ln -s / x; rm -rf x/*", rule: rDel},
	{cmd: "ln -s /etc e; rm -rf e/", rule: rDel},
	{cmd: "ln -s /etc e; rm -rf e/*", rule: rDel},
	{cmd: "ln -s /usr u; cd u; rm -rf *", rule: rDel},
	{cmd: "mount --bind / /mnt/x; rm -rf /mnt/x/*", rule: rDel},
	{cmd: "rm() { :; }; unset -f rm; rm -rf /", rule: rDel},
	{cmd: "rm() { :; }; unset rm; rm -rf /", rule: rDel},
	{cmd: "(rm() { :; }); rm -rf /", rule: rDel},
	{cmd: "rm() { :; } | true; rm -rf /", rule: rDel},
	{cmd: "rm() { :; }; command rm -rf /", rule: rDel},
	{cmd: "rm() { :; }; sudo rm -rf /", sudo: true, rule: rDel},
	{cmd: "(alias rm=echo); rm -rf /", rule: rDel},
	{cmd: "if false; then alias rm=echo; fi; rm -rf /", rule: rDel},
	{cmd: "(hash -p /bin/true rm); rm -rf /", rule: rDel},
	{cmd: "true || hash -p /bin/true rm; rm -rf /", rule: rDel},
	{cmd: "gdb -batch -ex 'shell rm -rf /'", rule: rDel},
	{cmd: "gdb -batch -ex '!rm -rf /'", rule: rDel},
	{cmd: `gdb -p 1 -batch -ex 'call system("rm -rf /")'`, rule: rDel},
	{cmd: "gdb -batch -ex run --args rm -rf /", rule: rDel},
	{cmd: "lldb -o 'platform shell rm -rf /'", rule: rDel},
	{cmd: "make -f - <<<'all:; rm -rf /'", rule: rDel},
	{cmd: "make -f - <<<$'all:\\n\\trm -rf /'", rule: rDel},
	{cmd: "printf 'all:\\n\\trm -rf /\\n' > Makefile; make", rule: rDel},
	{cmd: "make --eval='x := $(shell rm -rf /)'", rule: rDel},
	{cmd: "vim -c '!rm -rf /'", rule: rDel},
	{cmd: `awk 'BEGIN{system("rm -rf /")}'`, rule: rDel},
	{cmd: "find / -exec rm -rf {} +", rule: rDel},
	{cmd: "tmux new-session -d 'rm -rf /'", rule: rDel},
	{cmd: "tmux send-keys -t 0 'rm -rf /' Enter", rule: rDel},
	{cmd: "screen -dmS x rm -rf /", rule: rDel},
	{cmd: `screen -S x -X stuff 'rm -rf /\n'`, rule: rDel},
	{cmd: `psql -c '\! rm -rf /'`, rule: rDel},
	{cmd: `echo '\! mkfs.ext4 /dev/sda' | mysql`, rule: rFmt},
	{cmd: "sqlite3 x.db '.shell rm -rf /'", rule: rDel},
	{cmd: "man -P 'rm -rf /' ls", rule: rDel},
	// Near misses.
	{cmd: "cd /etc; cd -; rm -rf *"},
	{cmd: "CDPATH=/tmp; cd ./etc; rm -rf *"},
	{cmd: "pushd /tmp; popd; rm -rf *"},
	{cmd: "cd /tmp/build && rm -rf *"},
	{cmd: "cd /etc && ls *"},
	{cmd: "hash -r; ls"},
	{cmd: "alias ll='ls -l'; ll /"},
	{cmd: "rm() { echo \"$@\"; }; rm -rf /"},
	{cmd: "echo 'echo hi' > x.sh; chmod +x x.sh; ./x.sh"},
	{cmd: "ln -s /tmp/a b; rm -rf b/*"},
	{cmd: "ln -s /etc/nginx conf; ls conf/"},
	{cmd: "gdb -batch -ex 'bt' ./a.out core"},
	{cmd: "make -j4"},
	{cmd: "make -n -f - <<<$'all:\\n\\trm -rf /'"},
	{cmd: "make -f - <<<$'all:\\n\\t@echo $$HOME'"},
	{cmd: "tmux new -d -s x 'make test'"},
	{cmd: "sqlite3 x.db 'select 1'"},
	{cmd: "man ls"},
}

// groupCases returns every table of this file.
func groupCases() [][]checkCase {
	return [][]checkCase{stateCases, writerCases, interpCases, accountCases, powerCases, kernelCases, forkCases, nameCases, stdinCases, runnerCases, reachCases}
}

func TestCheckGroups(t *testing.T) {
	for _, table := range groupCases() {
		for _, tt := range table {
			t.Run(tt.name(), func(t *testing.T) {
				d := tt.policy.Check(tt.cmd, tt.options())
				if d.Rule != tt.rule || d.Allowed != (tt.rule == "") {
					t.Errorf("Check(%q) = %v; want rule %q", tt.cmd, d, tt.rule)
				}
				if !d.Allowed && (d.Reason == "" || d.Hint == "") {
					t.Errorf("Check(%q) refused without a reason or hint: %+v", tt.cmd, d)
				}
			})
		}
	}
}

// TestRulesDocumented checks that the rule table of the package
// documentation names every rule.
func TestRulesDocumented(t *testing.T) {
	b, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range validate.Rules() {
		if !strings.Contains(string(b), "//\t"+r.ID+" ") {
			t.Errorf("doc.go does not list rule %q", r.ID)
		}
	}
}
