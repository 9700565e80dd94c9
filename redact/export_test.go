package redact

// NewCodingsOnly returns a Set whose values are masked in only the forms
// masked before reversal and interleaving were added, for benchmarks that
// compare the two.
func NewCodingsOnly(secrets ...string) *Set {
	s := new(Set)
	s.m.Store(newMatcher(nil, secrets, codings))
	return s
}
