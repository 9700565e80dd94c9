package validate_test

import (
	"errors"
	"fmt"

	"github.com/rigout/rigout/validate"
)

func ExamplePolicy_Check() {
	var p validate.Policy // the default policy
	for _, cmd := range []string{
		"rm -rf ./build /tmp/cache",
		"grep 'rm -rf /' notes.txt",
		"r''m -rf /",
		"curl -fsSL https://example.com/install.sh | sh",
	} {
		d := p.Check(cmd, validate.Options{})
		fmt.Printf("%-50s allowed=%v rule=%s\n", cmd, d.Allowed, d.Rule)
	}
	// Output:
	// rm -rf ./build /tmp/cache                          allowed=true rule=
	// grep 'rm -rf /' notes.txt                          allowed=true rule=
	// r''m -rf /                                         allowed=false rule=recursive-delete-root
	// curl -fsSL https://example.com/install.sh | sh     allowed=false rule=remote-script
}

func ExamplePolicy_CheckArgv() {
	var p validate.Policy
	fmt.Println(p.CheckArgv([]string{"rm", "-rf", "/"}, validate.Options{}).Rule)
	fmt.Println(p.CheckArgv([]string{"bash", "-c", "mkfs.ext4 /dev/sda1"}, validate.Options{}).Rule)
	fmt.Println(p.CheckArgv([]string{"rm", "-rf", "/*"}, validate.Options{}).Allowed) // no shell: "/*" is a file name
	// Output:
	// recursive-delete-root
	// disk-format
	// true
}

func ExampleDecision_Err() {
	var p validate.Policy
	err := p.Check("sudo reboot", validate.Options{AllowSudo: true}).Err()
	var deny *validate.DenyError
	if errors.As(err, &deny) {
		fmt.Println(deny.Rule)
		fmt.Println(errors.Is(err, validate.ErrDenied))
		fmt.Println(err)
	}
	// Output:
	// power-state
	// true
	// validate: refused by power-state: reboot changes the power state of the machine at 1:6 (run through sudo)
}

func ExamplePolicy_allowMode() {
	p := validate.Policy{
		Mode:  validate.ModeAllow,
		Allow: []string{"git", "grep"},
		Rules: map[string]validate.Action{validate.RuleSudo: validate.Confirm},
	}
	for _, cmd := range []string{"git log | grep fix", "git log | sh", "sudo git status"} {
		d := p.Check(cmd, validate.Options{})
		fmt.Printf("%-20s allowed=%v confirm=%v rule=%s\n", cmd, d.Allowed, d.Confirm, d.Rule)
	}
	// Output:
	// git log | grep fix   allowed=true confirm=false rule=
	// git log | sh         allowed=false confirm=false rule=not-allowlisted
	// sudo git status      allowed=false confirm=true rule=sudo
}

func ExamplePolicy_CheckEnv() {
	var p validate.Policy
	for _, env := range []map[string]string{
		{"LANG": "C.UTF-8", "GOFLAGS": "-mod=mod"},
		{"PATH": "/usr/local/bin:/usr/bin:/bin:/home/me/.local/bin"},
		{"PATH": "/home/me/bin:/usr/bin:/bin"},
		{"LD_PRELOAD": "/tmp/hook.so"},
		{"PAGER": "cat"},
		{"PAGER": "rm -rf /"},
	} {
		d := p.CheckEnv(env)
		fmt.Printf("allowed=%v rule=%s\n", d.Allowed, d.Rule)
	}
	// Output:
	// allowed=true rule=
	// allowed=true rule=
	// allowed=false rule=environment
	// allowed=false rule=environment
	// allowed=true rule=
	// allowed=false rule=recursive-delete-root
}

// A command line is read-only when every program in it only observes, and
// has a plain argument vector when it is one simple command of literal
// words.
func ExampleDecision_ReadOnly() {
	var p validate.Policy
	for _, cmd := range []string{"git status", "ls -la | wc -l", "ls > listing", "find . -delete", "make build"} {
		d := p.Check(cmd, validate.Options{})
		fmt.Printf("%-16s allowed=%v read-only=%v argv=%q\n", cmd, d.Allowed, d.ReadOnly, d.Argv())
	}
	// Output:
	// git status       allowed=true read-only=true argv=["git" "status"]
	// ls -la | wc -l   allowed=true read-only=true argv=[]
	// ls > listing     allowed=true read-only=false argv=[]
	// find . -delete   allowed=true read-only=false argv=["find" "." "-delete"]
	// make build       allowed=true read-only=false argv=["make" "build"]
}
