//go:build !linux

package exec

// helperFilesSupport says why file operations through the helper are
// unavailable: openat2 is Linux's.
func helperFilesSupport() string { return "unavailable (openat2 is Linux only)" }

// helperFileOp refuses: the helper resolves names only with openat2.
func helperFileOp(f *helperFile) helperReply {
	return helperReply{Err: "exec: helper file operations need Linux (openat2)"}
}
