//go:build !darwin

package exec

// seatbeltPath returns "": Seatbelt is macOS's.
func seatbeltPath() string { return "" }
