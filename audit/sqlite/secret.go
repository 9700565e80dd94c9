package sqlite

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// secretSize is the length of the per-install HMAC key.
const secretSize = 32

// loadSecret reads the key at path, or, when create is set and the file is
// absent, creates it from rnd: the bytes go to a 0600 temporary file in the
// same directory, which is fsynced and then hard-linked into place, so the
// key appears whole or not at all and a concurrent creator's key is never
// replaced. It refuses a key file that group or others can read, as ssh
// refuses such a private key.
func loadSecret(path string, rnd io.Reader, create bool) ([]byte, error) {
	for attempt := 0; ; attempt++ {
		key, err := readSecret(path)
		if err == nil || !errors.Is(err, fs.ErrNotExist) || !create || attempt > 0 {
			return key, err
		}
		if err := writeSecret(path, rnd); err != nil {
			return nil, err
		}
	}
}

func readSecret(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("sqlite: read secret: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("sqlite: read secret: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("sqlite: secret %s is not a regular file", path)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("sqlite: secret %s is accessible by group or others (mode %04o); run chmod 600 on it", path, fi.Mode().Perm())
	}
	key := make([]byte, secretSize+1)
	n, err := io.ReadFull(f, key)
	if n != secretSize || !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, fmt.Errorf("sqlite: secret %s is not %d bytes", path, secretSize)
	}
	return key[:secretSize], nil
}

func writeSecret(path string, rnd io.Reader) error {
	key := make([]byte, secretSize)
	if _, err := io.ReadFull(rnd, key); err != nil {
		return fmt.Errorf("sqlite: generate secret: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("sqlite: create secret: %w", err)
	}
	defer os.Remove(tmp.Name())
	// CreateTemp makes the file 0600 before any byte is written.
	if _, err := tmp.Write(key); err != nil {
		tmp.Close()
		return fmt.Errorf("sqlite: write secret: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("sqlite: sync secret: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("sqlite: write secret: %w", err)
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("sqlite: install secret: %w", err)
	}
	return syncDir(path)
}

// syncDir fsyncs the directory holding path, so a new name in it survives a
// crash.
func syncDir(path string) error {
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return fmt.Errorf("sqlite: sync directory: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sqlite: sync directory: %w", err)
	}
	return nil
}
