package audit

// RowHash exposes the canonical row hash to tests that forge rows the way an
// attacker who knows the encoding would.
func RowHash(e Event, prev []byte) []byte {
	var p [32]byte
	copy(p[:], prev)
	h := newRowHasher().hash(&e, p)
	return h[:]
}
