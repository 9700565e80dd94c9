package files

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"path"
	"sort"
)

// mkdirAll creates p and any missing parents, as os.MkdirAll.
func mkdirAll(fsys fileSystem, p string, perm fs.FileMode) error {
	fi, err := fsys.Stat(p)
	if err == nil {
		if fi.IsDir() {
			return nil
		}
		return &fs.PathError{Op: "mkdir", Path: p, Err: errors.New("exists and is not a directory")}
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if parent := path.Dir(p); parent != p {
		if err := mkdirAll(fsys, parent, perm); err != nil {
			return err
		}
	}
	if err := fsys.Mkdir(p, perm); err != nil {
		if fi, serr := fsys.Stat(p); serr == nil && fi.IsDir() {
			return nil // made meanwhile
		}
		return err
	}
	return nil
}

// walkFunc is called for every entry of a walk, the root first; fi is
// from Lstat, so symbolic links are reported, never followed. Returning
// fs.SkipDir skips a directory's entries.
type walkFunc func(p string, fi fs.FileInfo) error

// walk visits root and, if it is a directory, everything below it in
// lexical order, never following symbolic links. It stops when ctx ends.
func walk(ctx context.Context, fsys fileSystem, root string, fn walkFunc) error {
	fi, err := fsys.Lstat(root)
	if err != nil {
		return err
	}
	return walkAt(ctx, fsys, root, fi, 0, fn)
}

func walkAt(ctx context.Context, fsys fileSystem, p string, fi fs.FileInfo, depth int, fn walkFunc) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := fn(p, fi); err != nil {
		if errors.Is(err, fs.SkipDir) && fi.IsDir() {
			return nil
		}
		return err
	}
	if !fi.IsDir() {
		return nil
	}
	entries, err := fsys.ReadDir(p)
	if errors.Is(err, errHidden) && depth > 0 {
		return nil // searched past, as if it were not there
	}
	if err != nil {
		return err
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	for _, e := range entries {
		if err := walkAt(ctx, fsys, path.Join(p, e.Name()), e, depth+1, fn); err != nil {
			return err
		}
	}
	return nil
}

// removeAll removes p and everything below it, links as links; it
// returns how many entries it removed.
func removeAll(ctx context.Context, fsys fileSystem, p string) (int, error) {
	fi, err := fsys.Lstat(p)
	if err != nil {
		return 0, err
	}
	n := 0
	if fi.IsDir() {
		entries, err := fsys.ReadDir(p)
		if err != nil {
			return 0, err
		}
		for _, e := range entries {
			if err := ctx.Err(); err != nil {
				return n, err
			}
			m, err := removeAll(ctx, fsys, path.Join(p, e.Name()))
			n += m
			if err != nil {
				return n, err
			}
		}
	}
	if err := fsys.Remove(p); err != nil {
		return n, err
	}
	return n + 1, nil
}

// tempName returns a fresh temporary name beside p, hidden, so a
// half-written file never appears under p's name.
func tempName(p string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return path.Join(path.Dir(p), "."+path.Base(p)+".rigout-"+hex.EncodeToString(b[:])+".tmp")
}
