package exec

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// helperSeals are the seals a helper's memfd carries: no write, no
// growth, no shrinking, and no change to the seals.
const helperSeals = unix.F_SEAL_WRITE | unix.F_SEAL_GROW | unix.F_SEAL_SHRINK | unix.F_SEAL_SEAL

// mfdExec is MFD_EXEC (Linux 6.3): an executable memfd even where
// vm.memfd_noexec makes them non-executable by default.
const mfdExec = 0x10

// ExecSealedHelper re-executes the running helper from sealed memory: it
// reads the program's own file (/proc/self/exe) once into a memfd
// (MFD_CLOEXEC|MFD_ALLOW_SEALING), seals it (F_SEAL_WRITE, F_SEAL_GROW,
// F_SEAL_SHRINK, F_SEAL_SEAL), hashes the sealed bytes and, only when they
// hash to sum, executes the memfd with argv (the program's arguments and a
// mark that VerifySealedHelper is to check). From then on nothing that
// writes the cached file changes the code that runs, this process's or
// that of the spawners it starts from /proc/self/exe.
//
// It returns only on failure: an error wrapping ErrHelperSealMismatch when
// the bytes do not hash to sum (the caller must not serve), or another
// error when the kernel offers no executable sealed memfd (no memfd_create,
// vm.memfd_noexec=2), in which case the caller may serve from the file the
// start line verified and must say so.
//
// exeFD, if not negative, is the descriptor the start line executed the
// helper through: it is closed here when it is the program's own file.
func ExecSealedHelper(sum string, argv []string, exeFD int) error {
	closeExeFD(exeFD)
	self, err := os.Open("/proc/self/exe")
	if err != nil {
		return fmt.Errorf("exec: sealed helper: %w", err)
	}
	defer self.Close()
	fd, err := unix.MemfdCreate("rigout-helper", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING|mfdExec)
	if errors.Is(err, unix.EINVAL) { // before Linux 6.3: no MFD_EXEC, and none needed
		fd, err = unix.MemfdCreate("rigout-helper", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	}
	if err != nil {
		return fmt.Errorf("exec: sealed helper: memfd_create: %w", err)
	}
	mem := os.NewFile(uintptr(fd), "memfd:rigout-helper")
	defer mem.Close()
	if _, err := io.Copy(mem, self); err != nil {
		return fmt.Errorf("exec: sealed helper: copy: %w", err)
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, helperSeals); err != nil {
		return fmt.Errorf("exec: sealed helper: seal: %w", err)
	}
	if err := checkSealed(mem, sum); err != nil {
		return err
	}
	err = unix.Exec("/proc/self/fd/"+strconv.Itoa(fd), argv, os.Environ())
	return fmt.Errorf("exec: sealed helper: execute the memfd: %w", err)
}

// VerifySealedHelper checks, in a helper ExecSealedHelper started, that
// the running program is a memfd carrying every seal and that its bytes
// hash to sum. An error wraps ErrHelperSealMismatch: the caller must not
// serve.
func VerifySealedHelper(sum string) error {
	self, err := os.Open("/proc/self/exe")
	if err != nil {
		return fmt.Errorf("%w: %w", ErrHelperSealMismatch, err)
	}
	defer self.Close()
	return checkSealed(self, sum)
}

// checkSealed checks that f carries every seal and hashes to sum.
func checkSealed(f *os.File, sum string) error {
	seals, err := unix.FcntlInt(f.Fd(), unix.F_GET_SEALS, 0)
	if err != nil || seals&helperSeals != helperSeals {
		return fmt.Errorf("%w: the program is not a sealed memfd (seals %#x, %v)", ErrHelperSealMismatch, seals, err)
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, 1<<40)); err != nil {
		return fmt.Errorf("%w: read: %w", ErrHelperSealMismatch, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != sum {
		return fmt.Errorf("%w: the sealed bytes hash to %s, want %s", ErrHelperSealMismatch, got, sum)
	}
	return nil
}

// closeExeFD closes fd when it is open on the program's own file (the
// descriptor the start line executed), so that nothing the helper starts
// inherits it.
func closeExeFD(fd int) {
	if fd < 3 {
		return
	}
	var a, b unix.Stat_t
	if unix.Fstat(fd, &a) != nil || unix.Stat("/proc/self/exe", &b) != nil {
		return
	}
	if a.Dev == b.Dev && a.Ino == b.Ino {
		unix.Close(fd)
	}
}
