//go:build !linux

package exec

import "context"

// helperFilesSupport says why file operations through the helper are
// unavailable: openat2 is Linux's.
func helperFilesSupport() string { return "unavailable (openat2 is Linux only)" }

// helperFileOp refuses: the helper resolves names only with openat2.
func helperFileOp(f *HelperFile) HelperReply {
	return HelperReply{Err: "exec: helper file operations need Linux (openat2)"}
}

// viewFileOp refuses, as helperFileOp does.
func viewFileOp(ctx context.Context, sb *Sandbox, p Principal, f *HelperFile) HelperReply {
	return helperFileOp(f)
}
