package audit

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// EventType is the dotted, lower-case type of an [Event], such as
// [TypeToolCall]. Its value is what the ledger stores.
type EventType string

// Event types the gateway and the ledger write. Types are dotted, lower
// case. A [Recorder] accepts any non-empty type outside "audit.", which is
// reserved for the events a ledger writes about itself; these are the ones
// with a fixed meaning.
const (
	TypeToolCall       EventType = "tool.call"           // a tool call: an intent row, then a done row
	TypeToolDenied     EventType = "tool.denied"         // a call refused by scope or policy
	TypeAuthFailed     EventType = "auth.failed"         // a request with a missing or wrong credential
	TypeSessionOpen    EventType = "session.open"        // an MCP or terminal session opened
	TypeSessionClose   EventType = "session.close"       // an MCP or terminal session closed
	TypeSessionCommand EventType = "session.command"     // a command written to a terminal session: exit code, or still running
	TypeProcessStart   EventType = "process.start"       // a background process started (sessions.Manager)
	TypeProcessExit              = "process.exit"        // a background process ended: exit code, signal, bytes
	TypeHostKeyLearned           = "ssh.hostkey.learned" // a host key recorded on first contact
	TypeApprovalDecide           = "approval.decide"     // an operator approved or denied a held-back call
	TypeServerStart              = "server.start"        // the gateway started serving
	TypeServerStop               = "server.stop"         // the gateway stopped serving
	TypeExport                   = "audit.export"        // an operator exported rows (written by the ledger)
	TypePrune                    = "audit.prune"         // an operator deleted old rows (written by the ledger)
	TypeHeadMismatch             = "audit.head.mismatch" // the ledger found rows missing or rewritten when it opened or wrote
	TypeChainKey                 = "audit.chain_key"     // the chain is keyed with a new key (see [KeyedRowHash]) from this row on (written by the ledger)
)

const (
	typePrefixReserved = "audit." // types a ledger writes itself; Validate refuses them
	maxTextBytes       = 64 << 10 // cap on any one text field, see Sanitize
)

// Phase is which row of a two-row call an [Event] is; empty for a
// one-shot event.
type Phase string

// Phases of a two-row call.
const (
	PhaseIntent Phase = "intent" // written and committed before a command starts
	PhaseDone   Phase = "done"   // written after it ends, with the same CallID
)

// Transport is how the caller of an [Event] reached the gateway. Its value
// is what the ledger stores; these are the ones rigout writes.
type Transport string

// Transports rigout writes.
const (
	TransportHTTP      Transport = "http"       // streamable HTTP, bearer-authenticated
	TransportStdio     Transport = "stdio"      // the stdio server, one local client
	TransportInProcess Transport = "in-process" // an embedder's in-process client, as the default principal
	TransportCLI       Transport = "cli"        // an operator's command on the ledger (export, prune)
)

// Event is one row of the ledger: who did what, where, when, what the policy
// decided and how it ended.
//
// Seq, Hash and PrevHash are set by the ledger; Record ignores them. The
// zero value of every other field means "not applicable".
type Event struct {
	Seq         int64         `json:"seq"`                    // position in the chain, assigned by the ledger, 1-based
	Time        time.Time     `json:"time"`                   // UTC; the ledger sets it if zero
	Type        EventType     `json:"type"`                   // dotted event type such as [TypeToolCall]; required
	CallID      string        `json:"call_id,omitempty"`      // correlation ID shared by a call's intent and done rows
	Phase       Phase         `json:"phase,omitempty"`        // [PhaseIntent], [PhaseDone], or empty for one-shot events
	Principal   string        `json:"principal,omitempty"`    // token name, never its value
	Transport   Transport     `json:"transport,omitempty"`    // "stdio", "http", "cli"
	RemoteAddr  string        `json:"remote_addr,omitempty"`  // client address for HTTP
	Session     string        `json:"session,omitempty"`      // MCP session ID
	Tool        string        `json:"tool,omitempty"`         // tool name
	Host        string        `json:"host,omitempty"`         // target host as the caller named it
	Route       string        `json:"route,omitempty"`        // route taken: "local", "ssh(web1 → 10.0.0.5:22)", ...
	Decision    Decision      `json:"decision,omitempty"`     // what the command policy decided: [DecisionAllow], [DecisionDeny], ...
	Rule        string        `json:"rule,omitempty"`         // ID of the policy rule that decided
	Bypassed    bool          `json:"bypassed,omitempty"`     // whether the policy was bypassed
	ExitCode    *int          `json:"exit_code,omitempty"`    // exit status of a command that ran to its end
	Signal      string        `json:"signal,omitempty"`       // signal that ended the command, if any
	Duration    time.Duration `json:"duration_ns,omitempty"`  // wall time of the call
	StdoutBytes int64         `json:"stdout_bytes,omitempty"` // bytes the command wrote to stdout
	StderrBytes int64         `json:"stderr_bytes,omitempty"` // bytes the command wrote to stderr
	Truncated   bool          `json:"truncated,omitempty"`    // whether output was cut at the cap
	Status      Status        `json:"status,omitempty"`       // how it stands or ended: [StatusOK], [StatusDenied], ...
	Error       string        `json:"error,omitempty"`        // error text, already redacted by the caller
	ArgsDigest  string        `json:"args_digest,omitempty"`  // keyed digest of the arguments, computed by the ledger
	Args        string        `json:"args,omitempty"`         // redacted argument values; stored only if the ledger is told to
	Detail      string        `json:"detail,omitempty"`       // JSON detail of events the ledger writes itself (audit.*)
	PrevHash    string        `json:"prev_hash,omitempty"`    // hex SHA-256 of the previous row; set by the ledger
	Hash        string        `json:"hash,omitempty"`         // hex SHA-256 of this row, see [RowHash]; set by the ledger
}

// Validate reports why a caller's e cannot be recorded: it has no Type, a
// Type reserved for the ledger ("audit.*"), a Phase other than
// [PhaseIntent], [PhaseDone] or empty, or a non-zero Time outside
// 1970-2261 (which nanoseconds since 1970 cannot hold). The error wraps
// [ErrInvalidEvent].
//
// A ledger calls Validate in Record after [Event.Sanitize]; the audit.*
// events it builds itself are not validated.
func (e *Event) Validate() error {
	if e.Type == "" {
		return fmt.Errorf("%w: empty Type", ErrInvalidEvent)
	}
	if strings.HasPrefix(string(e.Type), typePrefixReserved) {
		return fmt.Errorf("%w: type %q is reserved for the ledger", ErrInvalidEvent, e.Type)
	}
	switch e.Phase {
	case "", PhaseIntent, PhaseDone:
	default:
		return fmt.Errorf("%w: phase %q is not %q, %q or empty", ErrInvalidEvent, e.Phase, PhaseIntent, PhaseDone)
	}
	if !e.Time.IsZero() && (e.Time.Year() < 1970 || e.Time.Year() > 2261) {
		return fmt.Errorf("%w: time %s out of range", ErrInvalidEvent, e.Time)
	}
	return nil
}

// Sanitize makes e storable: a negative duration or byte count (a clock
// step) becomes zero, invalid UTF-8 in a text field becomes U+FFFD, and a
// text field longer than 64 KiB is cut, with a marker saying how much was
// dropped. A command's stderr in Error, or a large argument in Args, must
// not make the record fail: the caller would then refuse the call for a
// reason that has nothing to do with the disk.
func (e *Event) Sanitize() {
	e.Duration, e.StdoutBytes, e.StderrBytes = max(e.Duration, 0), max(e.StdoutBytes, 0), max(e.StderrBytes, 0)
	for _, p := range e.textFields() {
		*p = cleanText(*p)
	}
	e.Type = EventType(cleanText(string(e.Type)))
	e.Phase = Phase(cleanText(string(e.Phase)))
	e.Transport = Transport(cleanText(string(e.Transport)))
	e.Status = Status(cleanText(string(e.Status)))
	e.Decision = Decision(cleanText(string(e.Decision)))
}

// PrepareAppend readies e, a copy the caller handed a ledger, to be
// appended: Args dropped unless keepArgs, [Event.Sanitize], [Event.Validate]
// unless reserved (the audit.* events a ledger writes itself), ExitCode
// copied so the stored event shares no pointer with the caller's, Seq and
// the hashes cleared for the ledger to assign, and a zero Time set to now().
// Every ledger calls it first in Record, so they store the same events.
func (e *Event) PrepareAppend(keepArgs, reserved bool, now func() time.Time) error {
	if !keepArgs {
		e.Args = ""
	}
	e.Sanitize()
	if !reserved {
		if err := e.Validate(); err != nil {
			return err
		}
	}
	if e.ExitCode != nil {
		code := *e.ExitCode
		e.ExitCode = &code
	}
	e.Seq, e.Hash, e.PrevHash = 0, "", ""
	if e.Time.IsZero() {
		e.Time = now()
	}
	return nil
}

// cleanText returns s as valid UTF-8 of at most maxTextBytes.
func cleanText(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if len(s) > maxTextBytes {
		cut := maxTextBytes - 64
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = fmt.Sprintf("%s…[%d bytes cut]", s[:cut], len(s)-cut)
	}
	return s
}

// textFields are the string fields; Type, Phase, Transport, Status and
// Decision, of their own types, are the other five.
func (e *Event) textFields() [13]*string {
	return [13]*string{
		&e.CallID, &e.Principal, &e.RemoteAddr, &e.Session,
		&e.Tool, &e.Host, &e.Route, &e.Rule, &e.Signal, &e.Error, &e.ArgsDigest, &e.Args, &e.Detail,
	}
}
