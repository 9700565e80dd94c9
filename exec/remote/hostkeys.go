package remote

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/rigout/rigout/exec"
)

// HostKeyPolicy says what to do with a host key that known_hosts does not
// hold. A key that differs from the one on file is refused under every
// policy except HostKeyInsecureIgnore. There is no default: the zero value
// is invalid, as x/crypto/ssh refuses a nil HostKeyCallback.
type HostKeyPolicy int

const (
	// HostKeyStrict refuses an unknown host, with its fingerprint and the
	// command that trusts it (OpenSSH StrictHostKeyChecking=yes).
	HostKeyStrict HostKeyPolicy = iota + 1
	// HostKeyAcceptNew records an unknown host's key as a hashed line in
	// rigout's own known_hosts and reports it through
	// RouterConfig.OnHostKey (OpenSSH StrictHostKeyChecking=accept-new).
	HostKeyAcceptNew
	// HostKeyInsecureIgnore accepts any host key, changed ones included.
	// Every connection is logged as a warning and reported through
	// RouterConfig.OnHostKey. Only for throwaway hosts whose keys change on
	// every rebuild.
	HostKeyInsecureIgnore
)

// ErrNoHostKeyPolicy means a RouterConfig had no HostKeyPolicy.
var ErrNoHostKeyPolicy = errors.New("exec: no host key policy: set RouterConfig.HostKeyPolicy (HostKeyStrict, HostKeyAcceptNew or HostKeyInsecureIgnore)")

// String returns the policy's configuration name.
func (p HostKeyPolicy) String() string {
	switch p {
	case HostKeyStrict:
		return "strict"
	case HostKeyAcceptNew:
		return "accept-new"
	case HostKeyInsecureIgnore:
		return "insecure-ignore-host-key"
	}
	return fmt.Sprintf("HostKeyPolicy(%d)", int(p))
}

// ParseHostKeyPolicy parses "strict" (or "yes"), "accept-new", and
// "insecure-ignore-host-key" (or "insecure").
func ParseHostKeyPolicy(s string) (HostKeyPolicy, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "strict", "yes":
		return HostKeyStrict, nil
	case "accept-new":
		return HostKeyAcceptNew, nil
	case "insecure", "insecure-ignore-host-key":
		return HostKeyInsecureIgnore, nil
	}
	return 0, fmt.Errorf("exec: unknown host key policy %q (want strict, accept-new or insecure-ignore-host-key)", s)
}

// Sentinels for host key refusals; a *HostKeyError unwraps to one of them.
var (
	// ErrHostKeyUnknown means the host is not in any known_hosts file and
	// the policy is HostKeyStrict.
	ErrHostKeyUnknown = errors.New("exec: host key unknown")
	// ErrHostKeyChanged means known_hosts holds a different key for the
	// host: possibly a man-in-the-middle.
	ErrHostKeyChanged = errors.New("exec: host key changed")
	// ErrHostKeyRevoked means the key (or its certificate authority) is
	// listed under @revoked.
	ErrHostKeyRevoked = errors.New("exec: host key revoked")
	// ErrHostCertInvalid means the host showed a certificate that no
	// @cert-authority line vouches for, or that is expired or names other
	// hosts.
	ErrHostCertInvalid = errors.New("exec: host certificate not accepted")
)

// KnownKey is a key on file for a host.
type KnownKey struct {
	// Type is the key type ("ssh-ed25519").
	Type string `json:"type"`
	// Fingerprint is the SHA256 fingerprint ("SHA256:…").
	Fingerprint string `json:"fingerprint"`
	// File and Line locate the known_hosts entry.
	File string `json:"file"`
	Line int    `json:"line"`
	// CertAuthority is set for an @cert-authority line.
	CertAuthority bool `json:"cert_authority,omitempty"`
}

// String describes the key for messages: type, fingerprint and where it
// is on file, "@cert-authority" first for a CA line.
func (k KnownKey) String() string {
	s := fmt.Sprintf("%s %s (%s:%d)", k.Type, k.Fingerprint, k.File, k.Line)
	if k.CertAuthority {
		s = "@cert-authority " + s
	}
	return s
}

// HostKeyError reports a host key that was refused. Nothing was sent to the
// host: the check happens during key exchange, before authentication.
type HostKeyError struct {
	// Reason is ErrHostKeyUnknown, ErrHostKeyChanged, ErrHostKeyRevoked or
	// ErrHostCertInvalid.
	Reason error
	// Host is the name asked for; Address the host:port checked.
	Host    string
	Address string
	// KeyType and Fingerprint describe the key the host showed.
	KeyType     string
	Fingerprint string
	// Known lists the keys on file for the host (for ErrHostKeyChanged).
	Known []KnownKey
	// Fix says how to resolve it.
	Fix string
	// Err is the underlying knownhosts or certificate error, if any.
	Err error
}

func (e *HostKeyError) Error() string {
	var b strings.Builder
	switch e.Reason {
	case ErrHostKeyChanged:
		fmt.Fprintf(&b, "exec: HOST KEY CHANGED for %s (%s): it offered %s %s, but known_hosts has", e.Host, e.Address, e.KeyType, e.Fingerprint)
		for i, k := range e.Known {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(" " + k.String())
		}
		b.WriteString(". Someone may be intercepting the connection; nothing was sent to the host")
	case ErrHostKeyUnknown:
		fmt.Fprintf(&b, "exec: host %s (%s) is not in known_hosts; it offered %s %s", e.Host, e.Address, e.KeyType, e.Fingerprint)
	case ErrHostKeyRevoked:
		fmt.Fprintf(&b, "exec: host %s (%s) offered a revoked key %s %s", e.Host, e.Address, e.KeyType, e.Fingerprint)
	default:
		fmt.Fprintf(&b, "exec: host %s (%s) offered %s %s, which was not accepted", e.Host, e.Address, e.KeyType, e.Fingerprint)
	}
	if e.Err != nil && e.Reason != ErrHostKeyChanged && e.Reason != ErrHostKeyUnknown {
		fmt.Fprintf(&b, " (%v)", e.Err)
	}
	if e.Fix != "" {
		b.WriteString(". " + e.Fix)
	}
	return b.String()
}

// Unwrap returns Reason and Err.
func (e *HostKeyError) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Reason}
	}
	return []error{e.Reason, e.Err}
}

// HostKeyEventKind names what happened to a host key.
type HostKeyEventKind int

// The host key events.
const (
	// HostKeyLearned: an unknown host's key was recorded (HostKeyAcceptNew,
	// or Router.Trust).
	HostKeyLearned HostKeyEventKind = iota + 1
	// HostKeyMismatch: the host showed a key other than the one on file.
	HostKeyMismatch
	// HostKeyUnknownRefused: an unknown host was refused (HostKeyStrict).
	HostKeyUnknownRefused
	// HostKeyRevokedRefused: a revoked key or certificate was refused.
	HostKeyRevokedRefused
	// HostKeyCertRefused: a host certificate was not accepted.
	HostKeyCertRefused
	// HostKeyIgnored: HostKeyInsecureIgnore let a connection through
	// without checking the key.
	HostKeyIgnored
)

// String returns the dotted audit event type ("ssh.hostkey.learned").
func (k HostKeyEventKind) String() string {
	switch k {
	case HostKeyLearned:
		return "ssh.hostkey.learned"
	case HostKeyMismatch:
		return "ssh.hostkey.mismatch"
	case HostKeyUnknownRefused:
		return "ssh.hostkey.unknown"
	case HostKeyRevokedRefused:
		return "ssh.hostkey.revoked"
	case HostKeyCertRefused:
		return "ssh.hostkey.cert_refused"
	case HostKeyIgnored:
		return "ssh.hostkey.ignored"
	}
	return fmt.Sprintf("HostKeyEventKind(%d)", int(k))
}

// HostKeyEvent is reported through RouterConfig.OnHostKey for the audit
// ledger.
type HostKeyEvent struct {
	Kind HostKeyEventKind
	// Host is the name asked for; Address the host:port checked.
	Host    string
	Address string
	// Principal is the caller on whose behalf the connection was made
	// (empty for Router.Trust).
	Principal string
	// KeyType and Fingerprint describe the key the host showed.
	KeyType     string
	Fingerprint string
	// Known lists the keys on file, for HostKeyMismatch.
	Known []KnownKey
	// File is where a learned key was recorded.
	File string
	// Time is when it happened (RouterConfig.Now).
	Time time.Time
}

// knownHosts checks host keys against the user's known_hosts files (read
// only) and rigout's own file (where keys are recorded).
type knownHosts struct {
	userFiles []string
	own       string
	policy    HostKeyPolicy
	onEvent   func(context.Context, HostKeyEvent)
	logger    *slog.Logger
	now       func() time.Time
	trustCmd  func(host string) string
	probe     ssh.PublicKey

	// mu protects the following; it also serialises writes to own.
	mu     sync.Mutex
	cb     ssh.HostKeyCallback
	stamps map[string]fileStamp
	ca     map[string]map[int]bool // file → line numbers of @cert-authority
}

type fileStamp struct {
	size  int64
	mtime time.Time
	ok    bool
}

func newKnownHosts(userFiles []string, own string, policy HostKeyPolicy, onEvent func(context.Context, HostKeyEvent),
	logger *slog.Logger, now func() time.Time, trustCmd func(string) string) (*knownHosts, error) {
	// The probe only has to match no recorded key: 32 random bytes are
	// as good an Ed25519 public key for that as a generated pair's, without
	// the scalar multiplication (and, in a fresh process, the base point
	// table of about a millisecond) that generating one costs.
	pub := make(ed25519.PublicKey, ed25519.PublicKeySize)
	if _, err := rand.Read(pub); err != nil {
		return nil, fmt.Errorf("exec: probe key: %w", err)
	}
	probe, err := ssh.NewPublicKey(pub)
	if err != nil {
		return nil, err
	}
	k := &knownHosts{
		userFiles: slices.Clone(userFiles), own: own, policy: policy, onEvent: onEvent,
		logger: logger, now: now, trustCmd: trustCmd, probe: probe,
	}
	if _, _, err := k.current(); err != nil {
		return nil, err
	}
	return k, nil
}

func (k *knownHosts) files() []string {
	fs := slices.Clone(k.userFiles)
	if k.own != "" && !slices.Contains(fs, k.own) {
		fs = append(fs, k.own)
	}
	return fs
}

// current returns the callback for the files as they are now, reloading
// them when one changed on disk (rigout hosts trust may add a line while a
// gateway runs).
func (k *knownHosts) current() (ssh.HostKeyCallback, map[string]map[int]bool, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.currentLocked()
}

func (k *knownHosts) currentLocked() (ssh.HostKeyCallback, map[string]map[int]bool, error) {
	files := k.files()
	stamps := make(map[string]fileStamp, len(files))
	changed := k.cb == nil
	for _, f := range files {
		var st fileStamp
		if fi, err := os.Stat(f); err == nil && fi.Mode().IsRegular() {
			st = fileStamp{size: fi.Size(), mtime: fi.ModTime(), ok: true}
		}
		stamps[f] = st
		if k.stamps[f] != st {
			changed = true
		}
	}
	if !changed {
		return k.cb, k.ca, nil
	}
	var present []string
	ca := map[string]map[int]bool{}
	for _, f := range files {
		if !stamps[f].ok {
			continue
		}
		lines, err := caLines(f)
		if err != nil {
			return nil, nil, fmt.Errorf("exec: known_hosts: %w", err)
		}
		ca[f] = lines
		present = append(present, f)
	}
	cb, err := knownhosts.New(present...)
	if err != nil {
		return nil, nil, fmt.Errorf("exec: known_hosts: %w", err)
	}
	k.cb, k.stamps, k.ca = cb, stamps, ca
	return cb, ca, nil
}

// caLines returns the line numbers of a file's @cert-authority lines.
func caLines(path string) (map[int]bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[int]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		if bytes.HasPrefix(bytes.TrimSpace(sc.Bytes()), []byte("@cert-authority")) {
			out[n] = true
		}
	}
	return out, sc.Err()
}

// probeAddr is the remote address passed to knownhosts when none matters
// (it is used only when the host name is empty, which it never is here).
func probeAddr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 22} }

// known returns the keys on file for addr (host:port).
func (k *knownHosts) known(addr string) ([]KnownKey, error) {
	cb, ca, err := k.current()
	if err != nil {
		return nil, err
	}
	err = cb(addr, probeAddr(), k.probe)
	var ke *knownhosts.KeyError
	if !errors.As(err, &ke) {
		return nil, nil
	}
	return convertKnown(ke.Want, ca), nil
}

func convertKnown(want []knownhosts.KnownKey, ca map[string]map[int]bool) []KnownKey {
	out := make([]KnownKey, 0, len(want))
	for _, w := range want {
		out = append(out, KnownKey{
			Type:          w.Key.Type(),
			Fingerprint:   ssh.FingerprintSHA256(w.Key),
			File:          w.Filename,
			Line:          w.Line,
			CertAuthority: ca[w.Filename][w.Line],
		})
	}
	return out
}

// algorithms returns the host key algorithms to offer for addr, so that the
// server shows a key of a type on file (golang/go#29286): certificate
// algorithms first when a @cert-authority line covers the host, then the
// plain types on file. For an unknown host, the defaults without
// certificate algorithms, so that a key can be learned.
func algorithms(known []KnownKey) []string {
	supported := ssh.SupportedAlgorithms().HostKeys
	var plain, certs []string
	for _, a := range supported {
		if strings.Contains(a, "-cert-") {
			certs = append(certs, a)
		} else {
			plain = append(plain, a)
		}
	}
	if len(known) == 0 {
		return plain
	}
	var out []string
	hasCA := false
	for _, k := range known {
		if k.CertAuthority {
			hasCA = true
		}
	}
	if hasCA {
		out = append(out, certs...)
	}
	for _, k := range known {
		if k.CertAuthority {
			continue
		}
		for _, a := range algosForKeyType(k.Type) {
			if !slices.Contains(out, a) && slices.Contains(plain, a) {
				out = append(out, a)
			}
		}
	}
	if len(out) == 0 {
		return plain
	}
	return out
}

func algosForKeyType(t string) []string {
	if t == ssh.KeyAlgoRSA {
		return []string{ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256}
	}
	return []string{t}
}

// hop is what the host key check needs to know about one connection.
type hop struct {
	name      string
	addr      string
	principal string
}

// verdict is the outcome of checking one key.
type verdict struct {
	reason error // nil: accepted as on file
	known  []KnownKey
	err    error
}

// check classifies key for addr without applying the policy.
func (k *knownHosts) check(addr string, remote net.Addr, key ssh.PublicKey) (verdict, error) {
	cb, ca, err := k.current()
	if err != nil {
		return verdict{}, err
	}
	return classify(cb, ca, addr, remote, key), nil
}

func classify(cb ssh.HostKeyCallback, ca map[string]map[int]bool, addr string, remote net.Addr, key ssh.PublicKey) verdict {
	err := cb(addr, remote, key)
	if err == nil {
		return verdict{}
	}
	var rev *knownhosts.RevokedError
	if errors.As(err, &rev) {
		return verdict{reason: ErrHostKeyRevoked, err: err}
	}
	var ke *knownhosts.KeyError
	if errors.As(err, &ke) {
		known := convertKnown(ke.Want, ca)
		plain := slices.DeleteFunc(slices.Clone(known), func(k KnownKey) bool { return k.CertAuthority })
		if len(plain) == 0 {
			// No plain key on file (maybe only a CA): the key is new.
			return verdict{reason: ErrHostKeyUnknown, known: known, err: err}
		}
		return verdict{reason: ErrHostKeyChanged, known: known, err: err}
	}
	if cert, ok := key.(*ssh.Certificate); ok {
		// A certificate the CA check refused: find out whether its key or
		// its signer is revoked, else it is invalid.
		for _, sub := range []ssh.PublicKey{cert.Key, cert.SignatureKey} {
			if errors.As(cb(addr, remote, sub), &rev) {
				return verdict{reason: ErrHostKeyRevoked, err: err}
			}
		}
		return verdict{reason: ErrHostCertInvalid, err: err}
	}
	return verdict{reason: ErrHostCertInvalid, err: err}
}

// callback returns the HostKeyCallback for one connection. The refusal, if
// any, is stored in *refused so the dialer can return it as it is.
func (k *knownHosts) callback(ctx context.Context, h hop, refused **HostKeyError, fingerprint *string) ssh.HostKeyCallback {
	return func(_ string, _ net.Addr, key ssh.PublicKey) error {
		fp := ssh.FingerprintSHA256(key)
		*fingerprint = key.Type() + " " + fp
		ev := HostKeyEvent{Host: h.name, Address: h.addr, Principal: h.principal, KeyType: key.Type(), Fingerprint: fp, Time: k.now()}
		// knownhosts matches on h.addr; the remote address (not host:port
		// through a ProxyCommand) only has to parse.
		v, err := k.check(h.addr, probeAddr(), key)
		if err != nil {
			return err
		}
		if k.policy == HostKeyInsecureIgnore {
			ev.Kind = HostKeyIgnored
			if v.reason == ErrHostKeyChanged {
				ev.Known = v.known
				k.emit(ctx, HostKeyEvent{Kind: HostKeyMismatch, Host: h.name, Address: h.addr, Principal: h.principal,
					KeyType: key.Type(), Fingerprint: fp, Known: v.known, Time: ev.Time})
			}
			k.logger.LogAttrs(ctx, slog.LevelWarn, "host key not checked (insecure-ignore-host-key)",
				slog.String("host", h.name), slog.String("address", h.addr), slog.String("key", *fingerprint))
			k.emit(ctx, ev)
			return nil
		}
		if v.reason == nil {
			return nil
		}
		if v.reason == ErrHostKeyUnknown && k.policy == HostKeyAcceptNew {
			if _, isCert := key.(*ssh.Certificate); !isCert {
				file, learned, err := k.learn(h.addr, key)
				if err != nil {
					return err
				}
				if learned {
					ev.Kind, ev.File = HostKeyLearned, file
					k.logger.LogAttrs(ctx, slog.LevelInfo, "host key learned",
						slog.String("host", h.name), slog.String("address", h.addr),
						slog.String("key", *fingerprint), slog.String("file", file))
					k.emit(ctx, ev)
				}
				return nil
			}
		}
		e := k.refusal(h, key, v)
		*refused = e
		switch v.reason {
		case ErrHostKeyChanged:
			ev.Kind, ev.Known = HostKeyMismatch, v.known
		case ErrHostKeyUnknown:
			ev.Kind = HostKeyUnknownRefused
		case ErrHostKeyRevoked:
			ev.Kind = HostKeyRevokedRefused
		default:
			ev.Kind = HostKeyCertRefused
		}
		k.logger.LogAttrs(ctx, slog.LevelWarn, "host key refused",
			slog.String("host", h.name), slog.String("address", h.addr),
			slog.String("key", *fingerprint), slog.String("reason", v.reason.Error()))
		k.emit(ctx, ev)
		return e
	}
}

func (k *knownHosts) emit(ctx context.Context, ev HostKeyEvent) {
	if k.onEvent != nil {
		k.onEvent(ctx, ev)
	}
}

// refusal builds the error for a refused key, with the way out.
func (k *knownHosts) refusal(h hop, key ssh.PublicKey, v verdict) *HostKeyError {
	e := &HostKeyError{
		Reason: v.reason, Host: h.name, Address: h.addr,
		KeyType: key.Type(), Fingerprint: ssh.FingerprintSHA256(key), Known: v.known, Err: v.err,
	}
	trust := k.trustCmd(h.name)
	switch v.reason {
	case ErrHostKeyUnknown:
		e.Fix = "Check that fingerprint with the host's administrator (ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub on the host), then trust it with: " + trust
	case ErrHostKeyChanged:
		var files []string
		for _, kk := range v.known {
			if !kk.CertAuthority && !slices.Contains(files, kk.File) {
				files = append(files, kk.File)
			}
		}
		norm := knownhosts.Normalize(h.addr)
		var cmds []string
		for _, f := range files {
			cmds = append(cmds, "ssh-keygen -R "+shellQuote(norm)+" -f "+shellQuote(f))
		}
		e.Fix = "If the host was really re-installed or re-keyed, confirm the new fingerprint with its administrator, remove the old entry with: " +
			strings.Join(cmds, " and ") + ", then run: " + trust
	case ErrHostKeyRevoked:
		e.Fix = "A revoked key is never accepted; the host needs a new key"
	default:
		e.Fix = "Check the @cert-authority lines and the host's certificate (principals, validity)"
	}
	return e
}

// learn records key for addr in rigout's own file, unless it is on file by
// now (another connection may have learned it). It reports whether it
// wrote a line.
func (k *knownHosts) learn(addr string, key ssh.PublicKey) (string, bool, error) {
	if k.own == "" {
		return "", false, errors.New("exec: accept-new needs RouterConfig.KnownHostsFile to record keys in")
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	cb, ca, err := k.currentLocked()
	if err != nil {
		return "", false, err
	}
	v := classify(cb, ca, addr, probeAddr(), key)
	switch v.reason {
	case nil:
		return k.own, false, nil
	case ErrHostKeyUnknown:
	default:
		return "", false, k.refusal(hop{addr: addr, name: addr}, key, v)
	}
	if err := appendKnownHost(k.own, addr, key); err != nil {
		return "", false, err
	}
	if _, _, err := k.currentLocked(); err != nil {
		return "", false, err
	}
	return k.own, true, nil
}

// knownHostLine returns a hashed known_hosts line for addr.
func knownHostLine(addr string, key ssh.PublicKey) string {
	return knownhosts.HashHostname(knownhosts.Normalize(addr)) + " " +
		strings.TrimSpace(string(ssh.MarshalAuthorizedKey(key)))
}

// appendKnownHost appends a hashed line, creating the file (0600) and its
// directory (0700) as needed.
func appendKnownHost(path, addr string, key ssh.PublicKey) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("exec: known_hosts: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("exec: known_hosts: %w", err)
	}
	line := knownHostLine(addr, key) + "\n"
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 {
		last := make([]byte, 1)
		if r, err := os.Open(path); err == nil {
			if _, err := r.ReadAt(last, fi.Size()-1); err == nil && last[0] != '\n' {
				line = "\n" + line
			}
			r.Close()
		}
	}
	if _, err := f.WriteString(line); err != nil {
		f.Close()
		return fmt.Errorf("exec: known_hosts: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("exec: known_hosts: %w", err)
	}
	return nil
}

// shellQuote quotes s for a POSIX shell (for commands shown to people).
func shellQuote(s string) string {
	q, err := exec.QuotePOSIX(s)
	if err != nil {
		return fmt.Sprintf("%q", s)
	}
	return q
}
