package audit

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"strings"
	"time"
	"unicode/utf8"
)

// Event types the gateway and the ledger write. Types are dotted, lower
// case. Record accepts any non-empty type outside "audit.", which is the
// ledger's own; these are the ones with a fixed meaning.
const (
	TypeToolCall       = "tool.call"           // a tool call: an intent row, then a done row
	TypeToolDenied     = "tool.denied"         // a call refused by scope or policy
	TypeAuthFailed     = "auth.failed"         // a request with a missing or wrong credential
	TypeSessionOpen    = "session.open"        // an MCP or terminal session opened
	TypeSessionClose   = "session.close"       // an MCP or terminal session closed
	TypeHostKeyLearned = "ssh.hostkey.learned" // a host key recorded on first contact
	TypeServerStart    = "server.start"        // the gateway started serving
	TypeServerStop     = "server.stop"         // the gateway stopped serving
	TypeExport         = "audit.export"        // an operator exported rows (written by [Ledger.Export])
	TypePrune          = "audit.prune"         // an operator deleted old rows (written by [Ledger.Prune])
	TypeHeadMismatch   = "audit.head.mismatch" // the ledger found rows missing or rewritten when it opened or wrote
)

const (
	typePrefixReserved  = "audit." // types the ledger writes itself; Record refuses them
	maxStringFieldBytes = 64 << 10 // cap on any one text field, after which Record refuses the event
)

// Phases of a two-row call.
const (
	PhaseIntent = "intent" // written and committed before a command starts
	PhaseDone   = "done"   // written after it ends, with the same CallID
)

// Common values of [Event.Status].
const (
	StatusStarted = "started"
	StatusOK      = "ok"
	StatusError   = "error"
	StatusDenied  = "denied"
	StatusInvalid = "invalid"
	StatusTimeout = "timeout"
	StatusAborted = "aborted"
)

// Event is one row of the ledger: who did what, where, when, what the policy
// decided and how it ended.
//
// Seq, Hash and PrevHash are set by the ledger; Record ignores them. The
// zero value of every other field means "not applicable".
type Event struct {
	Seq         int64         `json:"seq"`                    // position in the chain, assigned by the ledger, 1-based
	Time        time.Time     `json:"time"`                   // UTC; the ledger sets it if zero
	Type        string        `json:"type"`                   // dotted event type such as [TypeToolCall]; required
	CallID      string        `json:"call_id,omitempty"`      // correlation ID shared by a call's intent and done rows
	Phase       string        `json:"phase,omitempty"`        // [PhaseIntent], [PhaseDone], or empty for one-shot events
	Principal   string        `json:"principal,omitempty"`    // token name, never its value
	Transport   string        `json:"transport,omitempty"`    // "stdio", "http", "cli"
	RemoteAddr  string        `json:"remote_addr,omitempty"`  // client address for HTTP
	Session     string        `json:"session,omitempty"`      // MCP session ID
	Tool        string        `json:"tool,omitempty"`         // tool name
	Host        string        `json:"host,omitempty"`         // target host as the caller named it
	Route       string        `json:"route,omitempty"`        // route taken: "local", "ssh(web1 → 10.0.0.5:22)", ...
	Decision    string        `json:"decision,omitempty"`     // policy decision: "allow", "deny", "confirm", ...
	Rule        string        `json:"rule,omitempty"`         // ID of the policy rule that decided
	Bypassed    bool          `json:"bypassed,omitempty"`     // whether the policy was bypassed
	ExitCode    *int          `json:"exit_code,omitempty"`    // exit status of a command that ran to its end
	Signal      string        `json:"signal,omitempty"`       // signal that ended the command, if any
	Duration    time.Duration `json:"duration_ns,omitempty"`  // wall time of the call
	StdoutBytes int64         `json:"stdout_bytes,omitempty"` // bytes the command wrote to stdout
	StderrBytes int64         `json:"stderr_bytes,omitempty"` // bytes the command wrote to stderr
	Truncated   bool          `json:"truncated,omitempty"`    // whether output was cut at the cap
	Status      string        `json:"status,omitempty"`       // [StatusOK], [StatusDenied], ...
	Error       string        `json:"error,omitempty"`        // error text, already redacted by the caller
	ArgsDigest  string        `json:"args_digest,omitempty"`  // keyed digest of the arguments, see [Ledger.DigestArgs]
	Args        string        `json:"args,omitempty"`         // redacted argument values; stored only with [Config.StoreArgs]
	Detail      string        `json:"detail,omitempty"`       // JSON detail of events the ledger writes itself (audit.*)
	PrevHash    string        `json:"prev_hash,omitempty"`    // hex SHA-256 of the previous row; set by the ledger
	Hash        string        `json:"hash,omitempty"`         // hex SHA-256 of this row; set by the ledger
}

// Recorder is the write side of the audit trail. The gateway's middleware
// holds a Recorder, so a test can hand it a fake (see package audittest).
//
// Record returns nil only once e is durably stored. Implementations must not
// let ctx's cancellation abandon a write: a client that disconnects must not
// lose its record.
type Recorder interface {
	Record(ctx context.Context, e Event) error
}

var _ Recorder = (*Ledger)(nil)

// validate reports why e cannot be recorded. reserved allows the audit.* types
// the ledger writes itself.
func (e *Event) validate(reserved bool) error {
	if e.Type == "" {
		return fmt.Errorf("%w: empty Type", ErrInvalidEvent)
	}
	if !reserved && strings.HasPrefix(e.Type, typePrefixReserved) {
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

// sanitize makes e storable: a negative duration or byte count (a clock
// step) becomes zero, invalid UTF-8 becomes U+FFFD, and a text field longer
// than maxStringFieldBytes is cut, with a marker saying how much was
// dropped. A command's stderr in Error, or a large argument in
// Args, must not make the record fail: the caller would then refuse the
// call for a reason that has nothing to do with the disk.
func (e *Event) sanitize() {
	e.Duration, e.StdoutBytes, e.StderrBytes = max(e.Duration, 0), max(e.StdoutBytes, 0), max(e.StderrBytes, 0)
	for _, p := range e.textFields() {
		if !utf8.ValidString(*p) {
			*p = strings.ToValidUTF8(*p, "\uFFFD")
		}
		if len(*p) > maxStringFieldBytes {
			cut := maxStringFieldBytes - 64
			for cut > 0 && !utf8.RuneStart((*p)[cut]) {
				cut--
			}
			*p = fmt.Sprintf("%s…[%d bytes cut]", (*p)[:cut], len(*p)-cut)
		}
	}
}

func (e *Event) textFields() [18]*string {
	return [18]*string{
		&e.Type, &e.CallID, &e.Phase, &e.Principal, &e.Transport, &e.RemoteAddr, &e.Session,
		&e.Tool, &e.Host, &e.Route, &e.Decision, &e.Rule, &e.Signal, &e.Status, &e.Error,
		&e.ArgsDigest, &e.Args, &e.Detail,
	}
}

// hashDomain starts every row's canonical encoding, so a row hash cannot be
// confused with a hash of anything else, and names the encoding's version.
const hashDomain = "rigout.audit.row.v1\x00"

// rowHasher computes row hashes. It is not safe for concurrent use; each
// goroutine that hashes owns one.
type rowHasher struct {
	h   hash.Hash
	buf [8]byte
	sum [sha256.Size]byte
}

func newRowHasher() *rowHasher { return &rowHasher{h: sha256.New()} }

func (r *rowHasher) u64(v uint64) {
	binary.BigEndian.PutUint64(r.buf[:], v)
	r.h.Write(r.buf[:8])
}

func (r *rowHasher) str(s string) {
	binary.BigEndian.PutUint32(r.buf[:4], uint32(len(s)))
	r.h.Write(r.buf[:4])
	r.h.Write([]byte(s))
}

func (r *rowHasher) flag(b bool) {
	r.buf[0] = 0
	if b {
		r.buf[0] = 1
	}
	r.h.Write(r.buf[:1])
}

// hash returns SHA-256 over the canonical encoding of e's stored fields and
// prev: a domain string, then every field in schema order, integers as 8
// bytes big-endian, strings as a 4-byte big-endian length and their bytes,
// booleans as one byte, the exit code as a presence byte and 8 bytes, and
// finally the 32-byte previous hash. Every encoding is unambiguous, so no two
// different rows share an encoding.
func (r *rowHasher) hash(e *Event, prev [sha256.Size]byte) [sha256.Size]byte {
	r.h.Reset()
	r.h.Write([]byte(hashDomain))
	r.u64(uint64(e.Seq))
	r.u64(uint64(e.Time.UnixNano()))
	r.str(e.Type)
	r.str(e.CallID)
	r.str(e.Phase)
	r.str(e.Principal)
	r.str(e.Transport)
	r.str(e.RemoteAddr)
	r.str(e.Session)
	r.str(e.Tool)
	r.str(e.Host)
	r.str(e.Route)
	r.str(e.Decision)
	r.str(e.Rule)
	r.flag(e.Bypassed)
	r.flag(e.ExitCode != nil)
	if e.ExitCode != nil {
		r.u64(uint64(int64(*e.ExitCode)))
	} else {
		r.u64(0)
	}
	r.str(e.Signal)
	r.u64(uint64(e.Duration))
	r.u64(uint64(e.StdoutBytes))
	r.u64(uint64(e.StderrBytes))
	r.flag(e.Truncated)
	r.str(e.Status)
	r.str(e.Error)
	r.str(e.ArgsDigest)
	r.str(e.Args)
	r.str(e.Detail)
	r.h.Write(prev[:])
	r.h.Sum(r.sum[:0])
	return r.sum
}

// hexHash is the printed form of a hash.
func hexHash(h [sha256.Size]byte) string { return hex.EncodeToString(h[:]) }
