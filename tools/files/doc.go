// Package files is the tool family for files without a shell:
// file_operations (read, write, append, edit, delete, copy, move, chmod,
// chown, list, stat, mkdir), search_files (glob and grep) and
// bulk_file_transfer (upload, download, copy, sync between any two hosts).
//
// # Overview
//
// Every tool takes `host` through the routing ladder (remote.Router). On
// this machine files are reached through package os; over SSH through
// SFTP on the router's pooled connection (one SFTP session per pooled
// connection, requests pipelined). No command line is ever built: a path
// is never an injection site, and chown never goes through sudo.
//
// A token's roots scope confines every path argument. The chain checks
// the resolved path lexically against the roots (so /srv/app does not
// admit /srv/app-evil); the family then confines symbolic links where the
// path is used: locally through os.Root, whose every lookup the kernel
// resolves beneath the root's directory handle, so a link, or a directory
// swapped for one between check and use, cannot lead out; over SFTP by
// resolving each component on the server (Lstat, ReadLink) and refusing
// any step that leaves a root, then naming the resolved path, which holds
// no symbolic link. SFTP has no openat: a process on the far host that
// swaps a checked directory for a link between the check and the request
// can still win that race. os.Root refuses absolute symbolic links even
// when they point inside the root.
//
// Mutating actions are judged by the command policy (package validate,
// through a gate.Gate) as the command that does the same would be: delete
// as rm -r, move as mv, chmod -R, write as tee; so protected roots and
// critical files are refused exactly as for execute_command. The policy
// is applied in deny mode whatever its mode.
//
// Writes are atomic: a temporary file in the same directory, synced, then
// renamed over the target; an existing file keeps its mode and (where
// permitted) owner. Transfers stream and hash on the way, re-read the
// temporary file to verify it, and publish by rename, so an interrupted
// transfer leaves the old file or the new one, never a torn one (a
// hidden .NAME.rigout-*.tmp file may be left behind).
//
// File contents shown to the caller are cleaned and redacted as command
// output is (textsafe.Text); the ledger's detail records paths, byte
// counts and hashes.
//
// With a credential store (Config.Credentials), file_operations and
// search_files take secrets ({"NAME": "alias"}, each alias allowed for the
// tool and host): ${secret.NAME} in written content (and in an edit's
// old_string and new_string) is replaced by the value, an unknown NAME is
// refused, and everything the call shows is masked of the values — each
// line before it is cut or matched, so no cut and no grep pattern reveals
// or tests part of one. Files the family wrote with a credential are
// remembered for its life and masked on later reads without secrets;
// hashes of such files are withheld.
//
// # Usage
//
//	ff, err := files.New(files.Config{Router: router, Gate: g})
//	if err != nil {
//		return err
//	}
//	gw, err := rigout.New(rigout.Config{Tools: ff.Tools(), Audit: ledger})
package files
