package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/rigout/rigout/config"
	"github.com/rigout/rigout/validate"
)

const checkUsage = `usage: rigout check [flags] 'COMMAND'
       rigout check [flags] --argv -- PROGRAM [ARG...]
       rigout check --rules

Check a shell command against the command policy without running it. The
decision names the rule and the reason. Exit status: 0 allowed, 1 refused
(or needs confirmation), 2 usage error.

Flags:
`

// runCheck implements "rigout check". args exclude the word "check".
func runCheck(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), checkUsage)
		fs.PrintDefaults()
	}
	allowSudo := fs.Bool("allow-sudo", false, "allow sudo, doas, su, pkexec and run0 (the command they run is still checked)")
	var mode validate.Mode
	fs.TextVar(&mode, "mode", validate.ModeDeny, "policy mode: deny (refuse what the rules refuse) or allow (also refuse unlisted programs)")
	var allow checkList
	fs.Var(&allow, "allow", "comma-separated programs that allow mode permits (repeatable)")
	rules := checkRules{}
	fs.Var(rules, "rule", "set a rule's action: ID=deny|confirm|off (repeatable)")
	asJSON := fs.Bool("json", false, "print the decision as JSON")
	argv := fs.Bool("argv", false, "check the arguments as an exact argument vector, run without a shell")
	dir := fs.String("dir", "", "absolute working directory the command would run in")
	listRules := fs.Bool("rules", false, "list the rules and exit")
	configPath := fs.String("config", "", "judge with the policy of this configuration file (protected roots, devices, critical files, mode, allow list, rules); --mode, --allow and --rule given too override it")
	shell := fs.String("shell", "posix", "the shell of the host the command would run on: posix, cmd (cmd.exe) or powershell (a Windows host's policy judges the last two)")
	stdinPath := fs.String("stdin", "", "a file holding the standard input the command would get (execute_command's stdin argument; - reads rigout check's own stdin): judged as code when the command reads its program from stdin")

	var pos []string
	rest := args
	for {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return 0
			}
			if len(pos) > 0 {
				fmt.Fprintf(stderr, "rigout check: quote the command (rigout check '%s …') or use --argv -- PROGRAM ARG…\n", pos[0])
			}
			return 2
		}
		left := fs.Args()
		if len(left) == 0 {
			break
		}
		if n := len(rest) - len(left); n > 0 && rest[n-1] == "--" || *argv {
			pos = append(pos, left...)
			break
		}
		pos = append(pos, left[0])
		rest = left[1:]
	}

	if *listRules {
		for _, r := range validate.Rules() {
			fmt.Fprintf(stdout, "%-22s %s\n", r.ID, r.Summary)
		}
		return 0
	}
	windowsDir := len(*dir) >= 3 && (*dir)[1] == ':' && ((*dir)[2] == '\\' || (*dir)[2] == '/') && *shell != "posix"
	if *dir != "" && !strings.HasPrefix(*dir, "/") && !windowsDir {
		fmt.Fprintf(stderr, "rigout check: --dir %q is not an absolute path\n", *dir)
		return 2
	}
	p := validate.Policy{Mode: mode, Allow: allow, Rules: rules}
	if *configPath != "" {
		fp, err := checkConfigPolicy(*configPath)
		if err != nil {
			fmt.Fprintf(stderr, "rigout check: %v\n", err)
			return 2
		}
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if set["mode"] {
			fp.Mode = mode
		}
		if set["allow"] {
			fp.Allow = allow
		}
		if len(rules) > 0 {
			merged := make(map[string]validate.Action, len(fp.Rules)+len(rules))
			for k, v := range fp.Rules {
				merged[k] = v
			}
			for k, v := range rules {
				merged[k] = v
			}
			fp.Rules = merged
		}
		p = *fp
	}
	if err := p.Validate(); err != nil {
		fmt.Fprintf(stderr, "rigout check: %v\n", err)
		return 2
	}
	opts := validate.Options{AllowSudo: *allowSudo, Dir: *dir}
	var err error
	if opts.Dialect, err = validate.ParseDialect(*shell); err != nil {
		fmt.Fprintf(stderr, "rigout check: --shell: %v\n", err)
		return 2
	}
	if *stdinPath != "" {
		var b []byte
		var err error
		if *stdinPath == "-" {
			b, err = io.ReadAll(os.Stdin)
		} else {
			b, err = os.ReadFile(*stdinPath)
		}
		if err != nil {
			fmt.Fprintf(stderr, "rigout check: --stdin: %v\n", err)
			return 2
		}
		s := string(b)
		opts.Stdin = &s
	}
	var d validate.Decision
	switch {
	case *argv:
		if len(pos) == 0 {
			fmt.Fprintln(stderr, "rigout check: --argv needs a program and its arguments, e.g. rigout check --argv -- rm -rf ./build")
			return 2
		}
		d = p.CheckArgv(pos, opts)
	case len(pos) == 1:
		d = p.Check(pos[0], opts)
	case len(pos) == 0:
		fmt.Fprintln(stderr, "rigout check: missing the command to check")
		fs.Usage()
		return 2
	default:
		fmt.Fprintf(stderr, "rigout check: want one command, got %d arguments; quote the command (rigout check 'rm -rf ./build') or use --argv\n", len(pos))
		return 2
	}

	if *asJSON {
		enc := json.NewEncoder(stdout)
		if err := enc.Encode(d); err != nil {
			fmt.Fprintf(stderr, "rigout check: %v\n", err)
			return 2
		}
	} else {
		checkPrint(stdout, d)
	}
	if d.Allowed {
		return 0
	}
	return 1
}

// checkConfigPolicy is the command policy of a configuration file, read as
// serve reads it; a file without a policy section gives the default.
func checkConfigPolicy(path string) (*validate.Policy, error) {
	f, err := config.Load(path)
	if err != nil {
		return nil, err
	}
	p, err := f.CommandPolicy()
	if err != nil {
		return nil, err
	}
	if p == nil {
		p = &validate.Policy{}
	}
	return p, nil
}

func checkPrint(w io.Writer, d validate.Decision) {
	switch {
	case d.Allowed && d.ReadOnly:
		fmt.Fprintln(w, "allowed (read-only)")
		return
	case d.Allowed:
		fmt.Fprintln(w, "allowed")
		return
	case d.Confirm:
		fmt.Fprintf(w, "needs confirmation: %s\n", d.Rule)
	default:
		fmt.Fprintf(w, "refused: %s\n", d.Rule)
	}
	fmt.Fprintf(w, "reason: %s\n", d.Reason)
	if d.Hint != "" {
		fmt.Fprintf(w, "hint: %s\n", d.Hint)
	}
}

// checkList is a repeatable comma-separated list flag.
type checkList []string

func (l *checkList) String() string { return strings.Join(*l, ",") }

func (l *checkList) Set(s string) error {
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			*l = append(*l, v)
		}
	}
	return nil
}

// checkRules is a repeatable ID=action flag.
type checkRules map[string]validate.Action

func (r checkRules) String() string {
	parts := make([]string, 0, len(r))
	for id, a := range r {
		parts = append(parts, id+"="+a.String())
	}
	return strings.Join(parts, ",")
}

func (r checkRules) Set(s string) error {
	for _, item := range strings.Split(s, ",") {
		id, act, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok || id == "" {
			return fmt.Errorf("want ID=deny|confirm|off, got %q", item)
		}
		var a validate.Action
		if err := a.UnmarshalText([]byte(act)); err != nil {
			return err
		}
		r[id] = a
	}
	return nil
}
