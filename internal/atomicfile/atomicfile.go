// Package atomicfile writes a file so that a reader sees the old contents
// or the new, never a part: the runtime record, the hosts file, a saved
// configuration, a client's configuration file.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write writes data to path, owner-only (mode 0600), through a temporary
// file in the same directory that is synced, closed and renamed over
// path. On error path is as it was and the temporary file is gone.
func Write(path string, data []byte) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err = f.Chmod(0o600); err != nil {
		return err
	}
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
