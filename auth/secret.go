package auth

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// redacted is what a [Secret] prints as everywhere except [Secret.Reveal].
const redacted = "[REDACTED]"

// Secret holds a credential: a bearer token, a setup token, a client secret.
// It redacts itself wherever it could be printed by accident: fmt verbs,
// slog (through [Secret.LogValue]) and encoding/json all see "[REDACTED]".
// Only [Secret.Reveal] returns the value, so every use of the real value is
// explicit and easy to find.
//
// The zero Secret is empty. A Secret is immutable and safe to copy.
type Secret struct {
	v string
}

// NewSecret wraps a credential value.
func NewSecret(value string) Secret { return Secret{v: value} }

// Reveal returns the credential itself. Call it only where the value must
// leave the process on purpose: an Authorization header, a connection file.
func (s Secret) Reveal() string { return s.v }

// IsZero reports whether the secret is empty.
func (s Secret) IsZero() bool { return s.v == "" }

// Digest returns the SHA-256 digest of the secret, the form in which
// credentials are stored and compared.
func (s Secret) Digest() Digest { return DigestOf(s.v) }

// String returns "[REDACTED]" (or "" for the zero Secret).
func (s Secret) String() string {
	if s.v == "" {
		return ""
	}
	return redacted
}

// GoString is like String, for the %#v verb.
func (s Secret) GoString() string { return "auth.Secret{" + redacted + "}" }

// LogValue implements [slog.LogValuer]: a Secret is never logged.
func (s Secret) LogValue() slog.Value { return slog.StringValue(redacted) }

// MarshalText implements [encoding.TextMarshaler] and redacts, so a Secret
// embedded in a struct that is marshalled for display never leaks.
func (s Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// UnmarshalText implements [encoding.TextUnmarshaler], so configuration
// files can carry secrets. The value "[REDACTED]" is refused: it means a
// redacted document was fed back as configuration.
func (s *Secret) UnmarshalText(b []byte) error {
	if string(b) == redacted {
		return fmt.Errorf("auth: secret is the redaction marker %q, not a value", redacted)
	}
	s.v = string(b)
	return nil
}

// Digest is the SHA-256 digest of a credential. Tokens are stored only as
// digests and compared digest against digest with [crypto/subtle], so the
// comparison time does not depend on the credential and no plaintext stays
// in memory longer than a request.
type Digest [sha256.Size]byte

// DigestOf returns the SHA-256 digest of a credential value.
func DigestOf(value string) Digest { return sha256.Sum256([]byte(value)) }

// ParseDigest parses the text form of a digest: 64 hex digits, optionally
// prefixed with "sha256:" (the form [Digest.String] produces and the
// configuration file uses).
func ParseDigest(s string) (Digest, error) {
	var d Digest
	h := strings.TrimPrefix(s, "sha256:")
	if len(h) != hex.EncodedLen(len(d)) {
		return d, fmt.Errorf("auth: digest must be sha256: and 64 hex digits, got %d characters", len(s))
	}
	if _, err := hex.Decode(d[:], []byte(h)); err != nil {
		return Digest{}, fmt.Errorf("auth: digest is not hex: %w", err)
	}
	return d, nil
}

// String returns "sha256:" and the digest in hex.
func (d Digest) String() string { return "sha256:" + hex.EncodeToString(d[:]) }

// IsZero reports whether d is the zero value (no digest configured).
func (d Digest) IsZero() bool { return d == Digest{} }

// Equal compares two digests in constant time.
func (d Digest) Equal(o Digest) bool { return subtle.ConstantTimeCompare(d[:], o[:]) == 1 }

// MarshalText implements [encoding.TextMarshaler].
func (d Digest) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText implements [encoding.TextUnmarshaler] with [ParseDigest].
func (d *Digest) UnmarshalText(b []byte) error {
	v, err := ParseDigest(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// tokenBytes is the entropy of every credential this package mints.
const tokenBytes = 32

// GenerateToken returns a fresh credential: 32 bytes read from rand,
// base64url-encoded without padding (43 characters, all valid in a Bearer
// header). Pass crypto/rand.Reader outside tests.
func GenerateToken(rand io.Reader) (string, error) {
	if rand == nil {
		return "", fmt.Errorf("auth: generate token: nil random source")
	}
	var b [tokenBytes]byte
	if _, err := io.ReadFull(rand, b[:]); err != nil {
		return "", fmt.Errorf("auth: generate token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// newSecret mints a credential from rand as a Secret.
func newSecret(rand io.Reader) (Secret, error) {
	v, err := GenerateToken(rand)
	if err != nil {
		return Secret{}, err
	}
	return NewSecret(v), nil
}

// newID mints a short, non-secret identifier (grant IDs, client IDs).
func newID(rand io.Reader, n int) (string, error) {
	b := make([]byte, n)
	if _, err := io.ReadFull(rand, b); err != nil {
		return "", fmt.Errorf("auth: generate id: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// equalSecret compares a presented credential with a stored digest in
// constant time.
func equalSecret(presented string, stored Digest) bool {
	d := DigestOf(presented)
	return subtle.ConstantTimeCompare(d[:], stored[:]) == 1
}
