//go:build !linux

package exec

// waitExited returns at once where waitid is not used: signals sent
// between the leader's exit and its reaping are then not guarded.
func waitExited(int) {}
