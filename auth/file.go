package auth

import (
	"fmt"
	"os"
	"path/filepath"
)

// WriteFileSecure writes data to path readable and writable by the owner
// only (mode 0600), for files that hold credentials such as the connection
// file. It creates a temporary file in the same directory, sets its mode
// before any content is written, writes and fsyncs it, renames it over path
// and fsyncs the directory. Readers see either the old file or the complete
// new one, and at no moment a world-readable file with a token in it.
func WriteFileSecure(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("auth: write %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	// CreateTemp already uses 0600; set it explicitly on the descriptor so
	// the guarantee does not rest on that detail.
	if err = f.Chmod(0o600); err != nil {
		return fmt.Errorf("auth: write %s: chmod: %w", path, err)
	}
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("auth: write %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("auth: write %s: sync: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("auth: write %s: close: %w", path, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("auth: write %s: rename: %w", path, err)
	}
	if d, derr := os.Open(dir); derr == nil {
		// Persist the rename. Best effort: some filesystems refuse to
		// fsync a directory, and the file itself is already durable.
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}
