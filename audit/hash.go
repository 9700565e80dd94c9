package audit

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
)

// hashDomain starts every row's canonical encoding, so a row hash cannot be
// confused with a hash of anything else, and names the encoding's version.
const hashDomain = "rigout.audit.row.v1\x00"

// RowHash returns the hash that chains e to the row before it: SHA-256 over
// the canonical encoding of e's stored fields followed by prev, the
// previous row's hash (all zero for the first row). Every ledger backend
// stores this value as e's hash and the previous row's as its prev hash, so
// that they all produce the same tamper-evident chain, and a chain exported
// from one can be checked without it.
//
// The encoding, version 1, is the bytes "rigout.audit.row.v1" and a zero
// byte, then the fields in this order: Seq, Time (as Unix nanoseconds),
// Type, CallID, Phase, Principal, Transport, RemoteAddr, Session, Tool,
// Host, Route, Decision, Rule, Bypassed, ExitCode, Signal, Duration (in
// nanoseconds), StdoutBytes, StderrBytes, Truncated, Status, Error,
// ArgsDigest, Args, Detail; and finally the 32 bytes of prev. Integers are
// 8 bytes big-endian (two's complement); strings, Status and Decision among
// them, are a 4-byte big-endian length and their bytes; booleans are one
// byte, 0 or 1; ExitCode is a presence byte and 8 bytes (zero when absent). Every field has one
// encoding, so no two different rows share one. PrevHash and Hash are not
// encoded.
//
// A backend hashes the event as it stores it: after [Event.Sanitize], with
// Seq assigned and Time in the precision it keeps (nanoseconds).
func RowHash(e *Event, prev [sha256.Size]byte) [sha256.Size]byte {
	return sha256.Sum256(encodeRow(hashDomain, e, prev))
}

// keyedHashDomain starts the encoding a keyed row hash covers, so a keyed
// hash is never equal to an unkeyed one of the same row.
const keyedHashDomain = "rigout.audit.keyed-row.v1\x00"

// KeyedRowHash is [RowHash] keyed with a secret: HMAC-SHA256 under key of
// the same canonical encoding, started by "rigout.audit.keyed-row.v1" and
// a zero byte instead of the unkeyed domain. Someone who can write a
// ledger but not read its key cannot compute it, so a row they insert,
// edit or re-chain fails verification. Ledgers chain with it from the
// point recorded by an [TypeChainKey] event, or from their first row.
func KeyedRowHash(key []byte, e *Event, prev [sha256.Size]byte) [sha256.Size]byte {
	m := hmac.New(sha256.New, key)
	m.Write(encodeRow(keyedHashDomain, e, prev))
	var sum [sha256.Size]byte
	m.Sum(sum[:0])
	return sum
}

// ChainKeyID names a chain key without revealing it: the first 16 hex
// digits of HMAC-SHA256 under key of "rigout.audit.chain-key-id". It is
// what [TypeChainKey] events and head files record, so that a verifier
// holding another key can say so.
func ChainKeyID(key []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("rigout.audit.chain-key-id"))
	return hex.EncodeToString(m.Sum(nil))[:16]
}

// DeriveChainKey returns the chain key a ledger derives from its
// per-install secret when it is given none: HMAC-SHA256 under secret of
// "rigout.audit.chain-key.v1".
func DeriveChainKey(secret []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("rigout.audit.chain-key.v1"))
	return m.Sum(nil)
}

// encodeRow is the canonical encoding [RowHash] documents, started by
// domain.
func encodeRow(domain string, e *Event, prev [sha256.Size]byte) []byte {
	// One allocation for most rows: the fields that can be long, and room for the rest.
	b := make([]byte, 0, 512+len(e.Route)+len(e.Error)+len(e.Args)+len(e.Detail))
	u64 := func(v int64) { b = binary.BigEndian.AppendUint64(b, uint64(v)) }
	str := func(s string) {
		b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
		b = append(b, s...)
	}
	flag := func(v bool) {
		if v {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
	}
	b = append(b, domain...)
	u64(e.Seq)
	u64(e.Time.UnixNano())
	str(string(e.Type))
	str(e.CallID)
	str(string(e.Phase))
	str(e.Principal)
	str(string(e.Transport))
	str(e.RemoteAddr)
	str(e.Session)
	str(e.Tool)
	str(e.Host)
	str(e.Route)
	str(string(e.Decision))
	str(e.Rule)
	flag(e.Bypassed)
	flag(e.ExitCode != nil)
	if e.ExitCode != nil {
		u64(int64(*e.ExitCode))
	} else {
		u64(0)
	}
	str(e.Signal)
	u64(int64(e.Duration))
	u64(e.StdoutBytes)
	u64(e.StderrBytes)
	flag(e.Truncated)
	str(string(e.Status))
	str(e.Error)
	str(e.ArgsDigest)
	str(e.Args)
	str(e.Detail)
	b = append(b, prev[:]...)
	return b
}

// KeyedDigest is the argument digest both ledgers store in
// [Event.ArgsDigest]: the first 16 hex digits of HMAC-SHA256 of raw under
// key. Identical arguments give identical digests under one key, while a
// short secret among them cannot be recovered by hashing guesses. raw
// should be a canonical encoding, such as json.Marshal of the argument
// map (which sorts keys). A nil key gives "" (a read-only ledger without
// its key).
func KeyedDigest(key, raw []byte) string {
	if key == nil {
		return ""
	}
	m := hmac.New(sha256.New, key)
	m.Write(raw)
	return hex.EncodeToString(m.Sum(nil))[:16]
}
