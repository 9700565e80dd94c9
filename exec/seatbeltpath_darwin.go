package exec

import "os"

// seatbeltPath returns SeatbeltExec when it exists: every Sandbox on macOS
// confines its commands with it.
func seatbeltPath() string {
	if _, err := os.Stat(SeatbeltExec); err != nil {
		return ""
	}
	return SeatbeltExec
}
