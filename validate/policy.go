package validate

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Mode selects how a [Policy] treats commands that no rule refuses.
type Mode int

// The modes.
const (
	// ModeDeny runs every command that no rule refuses. It is the default.
	ModeDeny Mode = iota
	// ModeAllow also refuses, with rule [RuleNotAllowlisted], every program
	// not named in [Policy.Allow]. Every segment of a command is checked:
	// each command of a list or pipeline, wrappers such as env and xargs,
	// and the commands inside substitutions and shell payloads.
	ModeAllow
)

// String returns "deny" or "allow".
func (m Mode) String() string {
	switch m {
	case ModeDeny:
		return "deny"
	case ModeAllow:
		return "allow"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// MarshalText implements [encoding.TextMarshaler].
func (m Mode) MarshalText() ([]byte, error) {
	if m != ModeDeny && m != ModeAllow {
		return nil, fmt.Errorf("%w: %d", ErrUnknownMode, int(m))
	}
	return []byte(m.String()), nil
}

// UnmarshalText implements [encoding.TextUnmarshaler]; it accepts "deny"
// and "allow" (an empty text is "deny").
func (m *Mode) UnmarshalText(b []byte) error {
	switch strings.ToLower(strings.TrimSpace(string(b))) {
	case "deny", "":
		*m = ModeDeny
	case "allow":
		*m = ModeAllow
	default:
		return fmt.Errorf("%w: %q (want deny or allow)", ErrUnknownMode, b)
	}
	return nil
}

// Dialect is the command language of a target's shell.
type Dialect int

// The dialects.
const (
	// DialectPOSIX is a POSIX shell (bash, sh, dash, zsh): the default.
	DialectPOSIX Dialect = iota
	// DialectCmd is cmd.exe, the Windows command interpreter.
	DialectCmd
	// DialectPowerShell is Windows PowerShell or PowerShell 7 (pwsh).
	DialectPowerShell
)

// String returns "posix", "cmd" or "powershell".
func (d Dialect) String() string {
	switch d {
	case DialectPOSIX:
		return "posix"
	case DialectCmd:
		return "cmd"
	case DialectPowerShell:
		return "powershell"
	}
	return fmt.Sprintf("Dialect(%d)", int(d))
}

// ErrUnknownDialect is returned by [ParseDialect] for a name it does not
// know.
var ErrUnknownDialect = errors.New("validate: unknown shell dialect")

// ParseDialect returns the dialect named "posix" (or "sh", "bash"),
// "cmd" (or "cmd.exe") or "powershell" (or "pwsh"), in any case.
func ParseDialect(name string) (Dialect, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "posix", "sh", "bash":
		return DialectPOSIX, nil
	case "cmd", "cmd.exe":
		return DialectCmd, nil
	case "powershell", "pwsh", "powershell.exe", "pwsh.exe":
		return DialectPowerShell, nil
	}
	return DialectPOSIX, fmt.Errorf("%w: %q (want posix, cmd or powershell)", ErrUnknownDialect, name)
}

// Action is what a rule does when it matches.
type Action int

// The actions.
const (
	// Deny refuses the command. It is the zero value, so a rule missing
	// from [Policy.Rules] refuses.
	Deny Action = iota
	// Confirm refuses the command unless a human confirms it: the
	// [Decision] has Confirm set and the gateway may ask through MCP
	// elicitation when the client supports it.
	Confirm
	// Off disables the rule. [RuleParseError] and [RuleTooComplex] cannot be
	// switched off: the command could not be checked, so Off acts as Deny.
	Off
)

// String returns "deny", "confirm" or "off".
func (a Action) String() string {
	switch a {
	case Deny:
		return "deny"
	case Confirm:
		return "confirm"
	case Off:
		return "off"
	}
	return fmt.Sprintf("Action(%d)", int(a))
}

// MarshalText implements [encoding.TextMarshaler].
func (a Action) MarshalText() ([]byte, error) {
	if a < Deny || a > Off {
		return nil, fmt.Errorf("%w: %d", ErrUnknownAction, int(a))
	}
	return []byte(a.String()), nil
}

// UnmarshalText implements [encoding.TextUnmarshaler]; it accepts "deny",
// "confirm" and "off".
func (a *Action) UnmarshalText(b []byte) error {
	switch strings.ToLower(strings.TrimSpace(string(b))) {
	case "deny":
		*a = Deny
	case "confirm":
		*a = Confirm
	case "off":
		*a = Off
	default:
		return fmt.Errorf("%w: %q (want deny, confirm or off)", ErrUnknownAction, b)
	}
	return nil
}

// Policy is the shell-command policy. It is a plain value, usually built from
// configuration.
//
// The zero value is the default policy: mode deny, every rule on, the default
// protected roots, devices and critical files. A nil *Policy behaves as the
// zero value.
//
// A Policy is safe for concurrent use as long as nobody modifies it;
// [Policy.Check] and [Policy.CheckArgv] never modify it.
type Policy struct {
	// Mode is ModeDeny (the default) or ModeAllow.
	Mode Mode

	// Allow lists the programs that may run in ModeAllow. A bare name such
	// as "git" allows that program looked up on PATH or in a system
	// directory (/bin, /usr/bin, /usr/local/bin, /sbin, /usr/sbin, /opt/homebrew/bin);
	// a name with a slash allows exactly that path. Shell builtins that run
	// nothing (cd, echo, export, test, …) never need listing. Allow is
	// ignored in ModeDeny.
	Allow []string

	// Rules overrides the action of rules by ID (see the table in the
	// package documentation). A rule not listed refuses (Deny).
	Rules map[string]Action

	// ProtectedRoots are the directories whose deletion, recursive
	// permission change or move is refused, together with any glob that
	// covers all their entries ("/usr/*"). Entries are absolute paths; "~"
	// stands for the home directory of whoever runs the command. Nil means
	// [DefaultProtectedRoots]; an empty non-nil slice protects nothing.
	ProtectedRoots []string

	// Devices are glob patterns (*, ?, [...]) of raw disks and kernel memory,
	// for rules raw-device-write and raw-device-read. Nil means
	// [DefaultDevices].
	Devices []string

	// CriticalFiles are glob patterns of files whose overwriting, deletion
	// or replacement is refused (rule critical-file-write); "**" matches
	// across directories. Nil means [DefaultCriticalFiles].
	CriticalFiles []string
}

// Options describe one call.
type Options struct {
	// AllowSudo permits sudo, doas, su, pkexec and run0. When false they
	// are refused with rule [RuleSudo]. Either way the command they run is
	// checked.
	AllowSudo bool

	// Dir is the absolute working directory the command will run in. When
	// set, relative paths are judged against it (so "rm -rf ." in "/" is
	// refused); when empty, relative paths are never taken for protected
	// roots.
	Dir string

	// Stdin is the standard input the command receives, when the caller
	// gives it (execute_command's stdin argument). A program that reads its
	// code from standard input (bash -s, sh, python3 -, perl, … | sh,
	// xargs, make -f -) is judged as running it; for every other program
	// it is data. Nil means the command gets no input.
	Stdin *string

	// Dialect is the language of the command: the shell of the machine
	// it runs on. The zero value, DialectPOSIX, judges it as bash text;
	// DialectCmd and DialectPowerShell judge it with the Windows rules
	// (see CheckCmd and CheckPowerShell) and the same rule actions, mode
	// and allow list, and never with the POSIX rules. For them, Dir is a
	// Windows path (C:\work), Readlink is not used, and Stdin is judged
	// as code when cmd or powershell reads its commands from it.
	Dialect Dialect

	// Readlink, when set, reads a symbolic link of the machine the
	// command runs on (os.Readlink for this one). Every path a command
	// deletes, writes or changes into is then resolved through the links
	// that already exist (plink/ after an earlier ln -s / plink), not
	// only those made earlier in the line. Nil: the filesystem is not
	// consulted. /proc/self/cwd is the command's working directory
	// either way, and /proc/self/fd/N, which the checker cannot follow,
	// is taken for /.
	Readlink func(name string) (string, error)
}

// Decision is the outcome of a check.
type Decision struct {
	// Allowed is true when the command may run.
	Allowed bool `json:"allowed"`
	// Rule is the ID of the rule that refused the command, "" when allowed.
	Rule string `json:"rule,omitempty"`
	// Reason names what was found and where.
	Reason string `json:"reason,omitempty"`
	// Hint says what the caller can do instead.
	Hint string `json:"hint,omitempty"`
	// Confirm is true when the rule is in Confirm mode: the command may run
	// if a human agrees. Allowed is false until then.
	Confirm bool `json:"confirm,omitempty"`
	// ReadOnly is true when the command is allowed and only observes:
	// every program in it is in the read-only table, with arguments that
	// table accepts, and nothing in the line writes or runs anything else
	// (see the package documentation, "Read-only commands"). A gateway
	// audits such a call with one row and lets a read-only token run it.
	ReadOnly bool `json:"read_only"`

	argv string // Argv's words, NUL-separated (a checked command holds no NUL)
}

// Err returns nil when the command is allowed, else a *[DenyError].
func (d Decision) Err() error {
	if d.Allowed {
		return nil
	}
	return &DenyError{Rule: d.Rule, Reason: d.Reason, Hint: d.Hint, Confirm: d.Confirm}
}

// String renders the decision on one line, e.g.
// "refused by recursive-delete-root: …".
func (d Decision) String() string {
	switch {
	case d.Allowed:
		return "allowed"
	case d.Confirm:
		return "needs confirmation (" + d.Rule + "): " + d.Reason
	}
	return "refused by " + d.Rule + ": " + d.Reason
}

// ErrDenied matches every *[DenyError] with [errors.Is].
var ErrDenied = errors.New("validate: command refused")

// Errors reported by [Policy.Validate] and the text unmarshalers.
var (
	ErrUnknownRule   = errors.New("validate: unknown rule")
	ErrUnknownMode   = errors.New("validate: unknown mode")
	ErrUnknownAction = errors.New("validate: unknown action")
	ErrBadPath       = errors.New("validate: bad path or pattern")
)

// DenyError is the error form of a refusal.
type DenyError struct {
	Rule    string // the rule ID, e.g. "recursive-delete-root"
	Reason  string // what was found and where
	Hint    string // what the caller can do instead
	Confirm bool   // the rule is in Confirm mode: a human may allow the command
}

// Error returns "validate: refused by RULE: REASON".
func (e *DenyError) Error() string {
	verb := "refused by "
	if e.Confirm {
		verb = "confirmation required by "
	}
	return "validate: " + verb + e.Rule + ": " + e.Reason
}

// Is reports whether target is [ErrDenied].
func (e *DenyError) Is(target error) bool { return target == ErrDenied }

// Validate reports configuration mistakes: unknown modes, rule IDs or
// actions, relative protected roots and malformed patterns. Check works on
// an invalid policy too (unknown rule IDs are ignored, so the rule they meant
// to change keeps refusing), but a configuration loader should call Validate
// and refuse to start on an error.
func (p *Policy) Validate() error {
	if p == nil {
		return nil
	}
	var errs []error
	if p.Mode != ModeDeny && p.Mode != ModeAllow {
		errs = append(errs, fmt.Errorf("%w: %d", ErrUnknownMode, int(p.Mode)))
	}
	for id, a := range p.Rules {
		if ruleIndex(id) < 0 {
			errs = append(errs, fmt.Errorf("%w: %q", ErrUnknownRule, id))
		}
		if a < Deny || a > Off {
			errs = append(errs, fmt.Errorf("%w: %d for rule %q", ErrUnknownAction, int(a), id))
		}
	}
	for _, r := range p.ProtectedRoots {
		if !strings.HasPrefix(r, "/") && r != "~" && !strings.HasPrefix(r, "~/") {
			errs = append(errs, fmt.Errorf("%w: protected root %q is not absolute", ErrBadPath, r))
		}
	}
	for _, list := range [][]string{p.Devices, p.CriticalFiles} {
		for _, d := range list {
			if !strings.HasPrefix(d, "/") {
				errs = append(errs, fmt.Errorf("%w: pattern %q is not absolute", ErrBadPath, d))
			}
		}
	}
	for _, a := range p.Allow {
		if strings.TrimSpace(a) == "" {
			errs = append(errs, fmt.Errorf("%w: empty name in the allow list", ErrBadPath))
		}
	}
	return errors.Join(errs...)
}

// Clone returns a deep copy of p (nil for nil), so that a holder of the copy
// is unaffected by later changes to p. Nil lists stay nil, so defaults still
// apply.
func (p *Policy) Clone() *Policy {
	if p == nil {
		return nil
	}
	c := *p
	c.Allow = slices.Clone(p.Allow)
	c.Rules = maps.Clone(p.Rules)
	c.ProtectedRoots = slices.Clone(p.ProtectedRoots)
	c.Devices = slices.Clone(p.Devices)
	c.CriticalFiles = slices.Clone(p.CriticalFiles)
	return &c
}
