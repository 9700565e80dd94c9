package validate

import (
	"strings"
)

// tar deletes with --remove-files and runs commands with --to-command,
// --use-compress-program, --checkpoint-action=exec= and --info-script.
func (w *walker) tar(inv *invocation, name string) {
	p := parseArgs(inv.args(), &optSyntax{argShort: "fCIFTXbLKNVgH", argLong: []string{"file", "directory", "use-compress-program", "info-script", "new-volume-script", "to-command", "files-from", "exclude-from", "checkpoint-action", "owner", "group", "mode", "transform", "xform", "exclude", "label", "newer", "after-date", "rsh-command", "format", "blocking-factor", "suffix", "index-file", "volno-file", "tape-length", "starting-file"}})
	for _, v := range p.vals {
		switch {
		case v.name == "I" || v.name == "F" || len(v.name) > 2 && (strings.HasPrefix("use-compress-program", v.name) || strings.HasPrefix("info-script", v.name) || strings.HasPrefix("new-volume-script", v.name) || strings.HasPrefix("to-command", v.name) || strings.HasPrefix("rsh-command", v.name)):
			w.payload(inv, v.val, "tar --"+v.name+" command", nil, true)
		case len(v.name) > 2 && strings.HasPrefix("checkpoint-action", v.name):
			if c, ok := keyValue(v.val, "exec="); ok {
				w.payload(inv, c, "tar --checkpoint-action command", nil, true)
			}
		}
	}
	creates := p.has("cruA", "create", "append", "update", "catenate", "concatenate")
	if len(inv.args()) > 0 && inv.args()[0].exact() && !strings.HasPrefix(inv.args()[0].s, "-") {
		old := inv.args()[0].s // old style: tar cf FILE …
		if strings.ContainsAny(old, "cruA") && strings.IndexByte(old, 'f') >= 0 && len(inv.args()) > 1 {
			w.writeTarget(inv, inv.args()[1], "tar f")
		}
	}
	if f, ok := p.val('f', "file"); ok && creates {
		w.writeTarget(inv, f, "tar -f")
	}
	w.tarExtract(inv, p)
	if p.hasLong("remove-files", 4) {
		dir := ""
		if d, ok := p.val('C', "directory"); ok && d.exact() {
			dir = d.s
		}
		for _, f := range p.ops {
			if dir != "" && f.exact() && !strings.HasPrefix(f.s, "/") {
				f.s = dir + "/" + f.s
			}
			w.deleteTarget(inv, "tar --remove-files", f, true, false)
		}
	}
}

// gitShellKeys are configuration keys whose values git runs through a
// shell.
var gitShellKeys = []string{"core.pager", "core.editor", "core.sshcommand", "core.fsmonitor", "core.askpass",
	"sequence.editor", "diff.external", "gpg.program", "credential.helper", "pager.", "alias.", "filter.",
	"merge.tool", "mergetool.", "difftool.", "uploadpack.packobjectshook", "core.hookspath"}

// git checks -c KEY=VALUE and git config values that git runs as shell
// commands, and --upload-pack, --receive-pack and --exec.
func (w *walker) git(inv *invocation, name string) {
	args := inv.args()
	dir := w.cwd
	defer func() { w.gitSub(inv, args, dir) }()
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.exact() {
			continue
		}
		s := a.s
		var kv string
		switch {
		case s == "-c" && i+1 < len(args) && args[i+1].exact():
			i++
			kv = args[i].s
		case s == "-c" && i+1 < len(args):
			// -c KEY="$VALUE": the key is known, the value is not.
			i++
			if k, _, ok := strings.Cut(args[i].prefix(), "="); ok {
				w.gitValue(inv, k, args[i])
			}
			continue
		case strings.HasPrefix(s, "-c") && len(s) > 2:
			kv = s[2:]
		case strings.HasPrefix(s, "--upload-pack=") || strings.HasPrefix(s, "--receive-pack=") || strings.HasPrefix(s, "--exec="):
			v := field{s: s[strings.IndexByte(s, '=')+1:], pos: a.pos}
			w.payload(inv, v, "git "+s[:strings.IndexByte(s, '=')]+" command", nil, true)
			continue
		case (s == "--upload-pack" || s == "--receive-pack" || s == "--exec" || s == "-u") && i+1 < len(args):
			i++
			w.payload(inv, args[i], "git "+s+" command", nil, true)
			continue
		case s == "-C" && i+1 < len(args):
			i++
			if d := args[i]; d.exact() && strings.HasPrefix(d.s, "/") {
				dir = cleanPath(d.s)
			} else if d.exact() && dir != "" {
				dir = cleanPath(dir + "/" + d.s)
			} else {
				dir = ""
			}
			continue
		case s == "--config-env" && i+1 < len(args) && args[i+1].exact():
			i++
			w.gitConfigEnv(inv, args[i])
			continue
		case strings.HasPrefix(s, "--config-env="):
			w.gitConfigEnv(inv, field{s: s[len("--config-env="):], pos: a.pos})
			continue
		case s == "config" && i+2 < len(args):
			// git config [--global] KEY VALUE
			rest := args[i+1:]
			for len(rest) > 0 && rest[0].exact() && strings.HasPrefix(rest[0].s, "-") {
				rest = rest[1:]
			}
			if len(rest) >= 2 && rest[0].exact() {
				w.gitValue(inv, rest[0].s, rest[1])
			}
			return
		default:
			continue
		}
		if k, v, ok := strings.Cut(kv, "="); ok {
			w.gitValue(inv, k, field{s: v, pos: a.pos})
		}
	}
}

func (w *walker) gitValue(inv *invocation, key string, v field) {
	key = strings.ToLower(key)
	if !gitRunsKey(key) {
		return
	}
	if !v.exact() {
		w.report(inv, RuleHiddenCode, "git "+key+" is a command git runs, and its value "+v.show()+at(v.pos)+" is only known at run time")
		return
	}
	if key == "core.hookspath" {
		w.report(inv, RuleHiddenCode, "git core.hooksPath="+v.s+at(v.pos)+" runs the hooks of that directory, code the checker cannot see")
		return
	}
	v.s = strings.TrimPrefix(v.s, "!")
	w.payload(inv, v, "git "+key+" command", nil, true)
}

// sshOpts checks -o ProxyCommand=… and LocalCommand, which ssh, scp and
// sftp run through a local shell.
func (w *walker) sshOpts(inv *invocation, name string) {
	args := inv.args()
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.exact() {
			continue
		}
		opt := ""
		switch {
		case a.s == "-o" && i+1 < len(args) && args[i+1].exact():
			i++
			opt = args[i].s
		case strings.HasPrefix(a.s, "-o") && len(a.s) > 2:
			opt = a.s[2:]
		default:
			continue
		}
		key, val, ok := strings.Cut(opt, "=")
		if !ok {
			key, val, ok = strings.Cut(opt, " ")
		}
		key = strings.ToLower(strings.TrimSpace(key))
		if ok && (key == "proxycommand" || key == "localcommand" || key == "knownhostscommand") {
			w.payload(inv, field{s: strings.TrimSpace(val), pos: a.pos}, name+" "+key, nil, true)
		}
	}
}

// netcat with -e or -c connects a program to a network peer: a remote
// shell.
func (w *walker) netcat(inv *invocation, name string) {
	args := inv.args()
	for i, a := range args {
		if !a.exact() {
			continue
		}
		switch {
		case oneOf(a.s, "-e", "-c", "--exec", "--sh-exec", "--lua-exec") && i+1 < len(args):
			w.report(inv, RuleRemoteScript, name+" "+a.s+" "+args[i+1].show()+at(a.pos)+" lets a network peer run commands")
			return
		case strings.HasPrefix(a.s, "-e") && len(a.s) > 2 || strings.HasPrefix(a.s, "--exec=") || strings.HasPrefix(a.s, "--sh-exec="):
			w.report(inv, RuleRemoteScript, name+" "+a.s+at(a.pos)+" lets a network peer run commands")
			return
		}
	}
}

// socat joining EXEC: or SYSTEM: with a network address is a remote shell.
func (w *walker) socat(inv *invocation, name string) {
	var exec, network bool
	for _, a := range inv.args() {
		if !a.exact() || strings.HasPrefix(a.s, "-") && len(a.s) > 1 {
			continue
		}
		addr := strings.ToLower(a.s)
		switch {
		case strings.HasPrefix(addr, "exec:") || strings.HasPrefix(addr, "system:"):
			exec = true
			cmd, _, _ := strings.Cut(a.s[strings.IndexByte(a.s, ':')+1:], ",")
			w.payload(inv, field{s: cmd, pos: a.pos}, "socat "+addr[:strings.IndexByte(addr, ':')]+" command", nil, true)
		case strings.HasPrefix(addr, "tcp") || strings.HasPrefix(addr, "udp") || strings.HasPrefix(addr, "ssl") ||
			strings.HasPrefix(addr, "openssl") || strings.HasPrefix(addr, "sctp") || strings.HasPrefix(addr, "socks") ||
			strings.HasPrefix(addr, "proxy") || strings.HasPrefix(addr, "vsock") || strings.HasPrefix(addr, "dccp"):
			network = true
		}
	}
	if exec && network {
		w.report(inv, RuleRemoteScript, "socat connects a program to a network address, so a peer can run commands"+at(inv.argv[0].pos))
	}
}

var dockerRunSyntax = optSyntax{
	argShort: "aceEhlmpuvw",
	argLong: []string{"add-host", "annotation", "attach", "blkio-weight", "blkio-weight-device", "cap-add", "cap-drop",
		"cgroup-parent", "cgroupns", "cidfile", "cpu-period", "cpu-quota", "cpu-rt-period", "cpu-rt-runtime",
		"cpu-shares", "cpus", "cpuset-cpus", "cpuset-mems", "device", "device-cgroup-rule", "device-read-bps",
		"device-read-iops", "device-write-bps", "device-write-iops", "dns", "dns-option", "dns-search", "domainname",
		"entrypoint", "env", "env-file", "expose", "gpus", "group-add", "health-cmd", "health-interval",
		"health-retries", "health-start-period", "health-timeout", "hostname", "ip", "ip6", "ipc", "isolation",
		"kernel-memory", "label", "label-file", "link", "link-local-ip", "log-driver", "log-opt", "mac-address",
		"memory", "memory-reservation", "memory-swap", "memory-swappiness", "mount", "name", "network", "net",
		"network-alias", "oom-score-adj", "pid", "pids-limit", "platform", "publish", "pull", "restart", "runtime",
		"security-opt", "shm-size", "stop-signal", "stop-timeout", "storage-opt", "sysctl", "tmpfs", "ulimit",
		"user", "userns", "uts", "volume", "volume-driver", "volumes-from", "workdir", "systemd", "pod"},
	posix: true,
}

// docker and podman run containers; a container with a protected host
// directory bind-mounted read-write (-v /:/host) or with --privileged can
// change the host, so its command is checked with the mounts mapped back to
// host paths.
func (w *walker) docker(inv *invocation, name string) {
	args := inv.args()
	i := 0
	for i < len(args) && args[i].exact() && strings.HasPrefix(args[i].s, "-") {
		if oneOf(args[i].s, "-H", "--host", "--context", "-c", "--config", "-l", "--log-level", "--tlscacert", "--tlscert", "--tlskey", "--url", "--connection") {
			i++
		}
		i++
	}
	if i >= len(args) || !args[i].exact() {
		return
	}
	sub, rest := args[i].s, args[i+1:]
	if sub == "container" && len(rest) > 0 && rest[0].exact() {
		sub, rest = rest[0].s, rest[1:]
	}
	if sub != "run" && sub != "create" {
		return
	}
	p := parseArgs(rest, &dockerRunSyntax)
	mounts := map[string]string{} // container path → host path
	risky := p.hasLong("privileged", 5)
	for _, v := range p.vals {
		if !v.val.exact() {
			continue
		}
		var host, ctr string
		ro := false
		switch {
		case v.name == "v" || len(v.name) > 2 && strings.HasPrefix("volume", v.name):
			parts := strings.Split(v.val.s, ":")
			if len(parts) < 2 {
				continue
			}
			host, ctr = parts[0], parts[1]
			ro = len(parts) > 2 && oneOf("ro", strings.Split(parts[2], ",")...)
		case len(v.name) > 2 && strings.HasPrefix("mount", v.name):
			bind := false
			for _, kv := range strings.Split(v.val.s, ",") {
				k, val, _ := strings.Cut(kv, "=")
				switch k {
				case "type":
					bind = val == "bind"
				case "source", "src":
					host = val
				case "target", "dst", "destination":
					ctr = val
				case "readonly", "ro":
					ro = val == "" || val == "true" || val == "1"
				}
			}
			if !bind {
				continue
			}
		case len(v.name) > 2 && strings.HasPrefix("device", v.name):
			dev, _, _ := strings.Cut(v.val.s, ":")
			if _, ok := w.deviceHit(w.target(field{s: dev})); ok {
				risky = true
			}
			continue
		default:
			continue
		}
		if ro || !strings.HasPrefix(host, "/") || !strings.HasPrefix(ctr, "/") {
			continue
		}
		host, ctr = cleanPath(host), cleanPath(ctr)
		if _, ok := w.protectedHit(target{lit: host}); ok {
			risky = true
		}
		mounts[ctr] = host
	}
	if !risky || len(p.ops) < 1 {
		return
	}
	cmd := p.ops[1:]
	if e, ok := p.val(0, "entrypoint"); ok {
		cmd = append([]field{e}, cmd...)
	}
	if len(cmd) == 0 {
		return
	}
	saved := w.res.links
	links := make(map[string]string, len(saved)+len(mounts))
	for k, v := range saved {
		links[k] = v
	}
	for k, v := range mounts {
		links[k] = v
	}
	w.res.links = links
	sub2 := inv.sub(cmd, name+" "+sub)
	sub2.stdin = nil
	w.invoke(sub2)
	w.res.links = saved
}

// tarExtract refuses extracting over a protected root with --overwrite,
// --unlink-first or --recursive-unlink, or into / itself: the archive then
// replaces any file there, /etc/passwd and the boot loader included.
func (w *walker) tarExtract(inv *invocation, p parsedArgs) {
	extract := p.has("x", "extract", "get")
	if a := inv.args(); len(a) > 0 && a[0].exact() && !strings.HasPrefix(a[0].s, "-") && strings.ContainsRune(a[0].s, 'x') {
		extract = true
	}
	if !extract {
		return
	}
	dir := w.cwd
	if d, ok := p.val('C', "directory"); ok {
		dir = ""
		if d.exact() && strings.HasPrefix(d.s, "/") {
			dir = cleanPath(d.s)
		} else if d.exact() && w.cwd != "" {
			dir = cleanPath(w.cwd + "/" + d.s)
		}
	}
	if dir == "" {
		return
	}
	h, ok := w.protectedHit(target{lit: w.resolveLinks(dir)})
	if !ok || h.all {
		return
	}
	overwrite := p.has("U", "overwrite", "unlink-first", "recursive-unlink")
	if overwrite || h.root == "/" {
		w.report(inv, RuleCriticalFileWrite, "tar extracts over the protected root "+showPath(h.root)+at(inv.argv[0].pos)+", replacing whatever the archive holds there, critical files included")
	}
}
