package validate_test

import (
	"strings"
	"testing"

	"github.com/rigout/rigout/validate"
)

func TestCheckEnv(t *testing.T) {
	tests := []struct {
		name   string
		env    map[string]string
		rule   string // "" means allowed
		reason string // a part of the reason
		policy *validate.Policy
	}{
		{name: "empty", env: nil},
		{name: "ordinary", env: map[string]string{"FOO": "bar", "LANG": "C.UTF-8", "TZ": "UTC", "GOFLAGS": "-mod=mod", "RUST_LOG": "debug", "CI": "1"}},
		{name: "python path", env: map[string]string{"PYTHONPATH": "src", "NODE_PATH": "lib", "PERL5LIB": "lib"}},
		{name: "bash env", env: map[string]string{"BASH_ENV": "/tmp/x.sh"}, rule: rEnv, reason: `"BASH_ENV"`},
		{name: "env", env: map[string]string{"ENV": "/tmp/x.sh"}, rule: rEnv},
		{name: "prompt command", env: map[string]string{"PROMPT_COMMAND": "rm -rf ~"}, rule: rEnv},
		{name: "shellopts", env: map[string]string{"SHELLOPTS": "xtrace"}, rule: rEnv},
		{name: "bashopts", env: map[string]string{"BASHOPTS": "expand_aliases"}, rule: rEnv},
		{name: "ifs", env: map[string]string{"IFS": "/"}, rule: rEnv},
		{name: "ld preload", env: map[string]string{"LD_PRELOAD": "/tmp/evil.so"}, rule: rEnv, reason: "dynamic linker"},
		{name: "ld library path", env: map[string]string{"LD_LIBRARY_PATH": "/tmp"}, rule: rEnv},
		{name: "ld audit", env: map[string]string{"LD_AUDIT": "/tmp/a.so"}, rule: rEnv},
		{name: "gconv", env: map[string]string{"GCONV_PATH": "/tmp"}, rule: rEnv},
		{name: "exported function", env: map[string]string{"BASH_FUNC_ls%%": "() { rm -rf /; }"}, rule: rEnv},
		{name: "old exported function", env: map[string]string{"ls": "() { rm -rf /; }"}, rule: rEnv},
		{name: "name with equals", env: map[string]string{"BASH_ENV=/tmp/x": ""}, rule: rEnv, reason: "not a shell identifier"},
		{name: "nul", env: map[string]string{"A": "x\x00y"}, rule: rEnv, reason: "NUL"},
		{name: "ps4 substitution", env: map[string]string{"PS4": "$(rm -rf ~)"}, rule: rEnv},
		{name: "ps4 plain", env: map[string]string{"PS4": "+ "}},
		{name: "ps1 plain", env: map[string]string{"PS1": `\u@\h:\w\$ `}},
		{name: "pythonstartup", env: map[string]string{"PYTHONSTARTUP": "/tmp/s.py"}, rule: rEnv},
		{name: "perl5opt", env: map[string]string{"PERL5OPT": "-Mevil"}, rule: rEnv},
		{name: "rubyopt", env: map[string]string{"RUBYOPT": "-revil"}, rule: rEnv},
		{name: "node options", env: map[string]string{"NODE_OPTIONS": "--require /tmp/x.js"}, rule: rEnv},
		{name: "java tool options", env: map[string]string{"JAVA_TOOL_OPTIONS": "-javaagent:/tmp/a.jar"}, rule: rEnv},
		{name: "git config", env: map[string]string{"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.pager", "GIT_CONFIG_VALUE_0": "sh"}, rule: rEnv},
		{name: "pager cat", env: map[string]string{"PAGER": "cat", "GIT_PAGER": "less -R", "EDITOR": "vim"}},
		{name: "pager destructive", env: map[string]string{"PAGER": "rm -rf /"}, rule: rDel, reason: `"PAGER"`},
		{name: "git ssh command", env: map[string]string{"GIT_SSH_COMMAND": "ssh -i key -o ProxyCommand='mkfs.ext4 /dev/sda'"}, rule: rFmt},
		{name: "path system", env: map[string]string{"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}},
		{name: "path appended", env: map[string]string{"PATH": "/usr/bin:/bin:/home/me/.local/bin:/home/me/go/bin"}},
		{name: "path prepended", env: map[string]string{"PATH": "/home/me/.local/bin:/usr/bin:/bin"}, rule: rEnv, reason: "before the system directory"},
		{name: "path dot", env: map[string]string{"PATH": "/usr/bin:/bin:."}, rule: rEnv, reason: "relative"},
		{name: "path empty entry", env: map[string]string{"PATH": "/usr/bin::/bin"}, rule: rEnv, reason: "empty"},
		{name: "path tilde", env: map[string]string{"PATH": "/usr/bin:~/bin"}, rule: rEnv},
		{name: "path no system", env: map[string]string{"PATH": "/tmp/bin"}, rule: rEnv},
		{name: "path unclean", env: map[string]string{"PATH": "/usr/bin/../../tmp:/bin"}, rule: rEnv},
		{name: "first sorted wins", env: map[string]string{"LD_PRELOAD": "x", "BASH_ENV": "y"}, rule: rEnv, reason: "BASH_ENV"},
		{name: "rule off", env: map[string]string{"LD_PRELOAD": "x"}, policy: &validate.Policy{Rules: map[string]validate.Action{rEnv: validate.Off}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := tt.policy.CheckEnv(tt.env)
			if d.Rule != tt.rule || d.Allowed != (tt.rule == "") {
				t.Fatalf("CheckEnv(%q) = %v; want rule %q", tt.env, d, tt.rule)
			}
			if !d.Allowed && (d.Reason == "" || d.Hint == "") {
				t.Errorf("CheckEnv(%q) refused without a reason or hint: %+v", tt.env, d)
			}
			if !strings.Contains(d.Reason, tt.reason) {
				t.Errorf("CheckEnv(%q) reason %q; want it to mention %q", tt.env, d.Reason, tt.reason)
			}
		})
	}
	confirm := &validate.Policy{Rules: map[string]validate.Action{rEnv: validate.Confirm}}
	if d := confirm.CheckEnv(map[string]string{"LD_PRELOAD": "x"}); d.Allowed || !d.Confirm {
		t.Errorf("confirm policy: %+v; want a request for confirmation", d)
	}
}
