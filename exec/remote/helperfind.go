package remote

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// HelperPlatforms returns the platforms a rigout release ships the helper
// for, beside the rigout binary in every archive (see HelperFileName).
func HelperPlatforms() []string { return []string{"linux/amd64", "linux/arm64"} }

// HelperFileName returns the file name of the helper for platform
// ("linux/amd64") in a release archive and beside an installed rigout:
// "rigout-helper-linux-amd64".
func HelperFileName(platform string) string {
	return "rigout-helper-" + strings.ReplaceAll(platform, "/", "-")
}

// FindHelperBinaries reads the helpers a release ships beside the program
// exe (the running rigout: os.Executable, symbolic links resolved), one
// file per platform of HelperPlatforms named by HelperFileName. It returns
// a HelperConfig holding those found, its Origin saying where they were
// found or, when none was, where they were looked for. A missing file is
// not an error (that platform's hosts fall back, or are refused under
// HelperRequire); a file that exists but cannot be read, or is not a
// regular file, is.
func FindHelperBinaries(exe string) (*HelperConfig, error) {
	cfg := &HelperConfig{Binaries: map[string][]byte{}}
	if exe == "" {
		cfg.Origin = "none found: the running program's path is unknown; set ssh.helper.binaries"
		return cfg, nil
	}
	if p, err := filepath.EvalSymlinks(exe); err == nil {
		exe = p
	}
	dir := filepath.Dir(exe)
	var found []string
	for _, platform := range HelperPlatforms() {
		p := filepath.Join(dir, HelperFileName(platform))
		fi, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("exec: helper for %s: %w", platform, err)
		}
		if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("exec: helper for %s: %s is not a regular file", platform, p)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("exec: helper for %s: %w", platform, err)
		}
		cfg.Binaries[platform] = b
		found = append(found, platform)
	}
	if len(found) == 0 {
		cfg.Origin = fmt.Sprintf("none found: no %s beside %s; put the release archive's helpers there or set ssh.helper.binaries",
			strings.ReplaceAll(HelperFileName("linux/*"), "*", "<arch>"), exe)
		return cfg, nil
	}
	cfg.Origin = fmt.Sprintf("%s beside %s", strings.Join(found, ", "), exe)
	return cfg, nil
}

// shipsHelper reports whether cfg holds a helper binary for any platform.
func shipsHelper(cfg *HelperConfig) bool {
	return cfg != nil && len(cfg.Binaries) > 0
}

// noHelperReason says why cfg ships no helper.
func noHelperReason(cfg *HelperConfig) string {
	switch {
	case cfg == nil:
		return "no rigout helper shipped"
	case cfg.Origin != "":
		return "no rigout helper shipped (" + cfg.Origin + ")"
	}
	return "no rigout helper shipped (no binaries configured)"
}
