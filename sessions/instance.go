package sessions

import (
	"fmt"
	"strings"
)

// maxInstanceLen bounds the instance name carried in IDs.
const maxInstanceLen = 40

// ElsewhereError reports an ID made by another gateway instance: behind a
// load balancer, a process or terminal session lives on the gateway that
// started it, and this one cannot reach it. errors.Is(err, ErrNotFound)
// holds. It tells nothing about whether the ID exists: the owner's name
// is read from the ID itself.
type ElsewhereError struct {
	// ID is the ID asked about.
	ID string
	// Owner is the instance named in the ID.
	Owner string
	// Here is this gateway's instance name ("" if it has none).
	Here string
}

// Error implements error.
func (e *ElsewhereError) Error() string {
	return fmt.Sprintf("sessions: %s belongs to gateway %s; this is gateway %s", e.ID, e.Owner, e.HereName())
}

// HereName is Here, or "(unnamed)".
func (e *ElsewhereError) HereName() string {
	if e.Here == "" {
		return "(unnamed)"
	}
	return e.Here
}

// Is makes errors.Is(err, ErrNotFound) true.
func (e *ElsewhereError) Is(target error) bool { return target == ErrNotFound }

// InstanceOf returns the gateway instance named in a process or terminal
// session ID ("p1a2b3c4d5e6f@gw-a" → "gw-a"), "" if it names none.
func InstanceOf(id string) string {
	_, inst, ok := strings.Cut(id, "@")
	if !ok {
		return ""
	}
	return inst
}

// instanceLabel keeps the characters of name that are safe in an ID
// (letters, digits, '.', '_', '-'), at most maxInstanceLen of them.
func instanceLabel(name string) string {
	var b strings.Builder
	for _, r := range name {
		if b.Len() >= maxInstanceLen {
			break
		}
		if r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Instance is the gateway instance name this Manager puts in its IDs, ""
// if none.
func (m *Manager) Instance() string { return m.cfg.Instance }

// withInstance appends this gateway's instance name to a fresh ID.
func (m *Manager) withInstance(id string) string {
	if m.cfg.Instance == "" {
		return id
	}
	return id + "@" + m.cfg.Instance
}

// notFound is the error for an ID this Manager does not hold: an
// *ElsewhereError when the ID names another instance, else ErrNotFound.
func (m *Manager) notFound(id string) error {
	if owner := InstanceOf(id); owner != "" && owner != m.cfg.Instance {
		return &ElsewhereError{ID: id, Owner: owner, Here: m.cfg.Instance}
	}
	return ErrNotFound
}
