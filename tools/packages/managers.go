package packages

import (
	"fmt"
	"regexp"
	"strings"
)

// Manager is one package manager: how install_software calls it and which
// package names it accepts.
type Manager struct {
	// Name is the package_manager value: "apt", "dnf", ….
	Name string
	// Probe is the program whose --version run means the host has it.
	Probe string
	// Install is the argv before the package names.
	Install []string
	// Pattern is what one package name (with the version or arch syntax
	// the manager takes) must match. None allows a leading '-', spaces or
	// shell syntax, so no name can pass as an option.
	Pattern *regexp.Regexp
	// System is set for the operating system's managers, which need root.
	System bool
}

// Managers are the package managers install_software knows. Auto picks
// the first system manager, in this order, whose probe runs on the host.
var Managers = []Manager{
	{Name: "apt", Probe: "apt-get", System: true,
		Install: []string{"env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", "--no-install-recommends"},
		Pattern: regexp.MustCompile(`^[a-z0-9][a-z0-9+.-]*(:[a-z0-9-]+)?(=[A-Za-z0-9.+:~-]+)?$`)},
	{Name: "dnf", Probe: "dnf", System: true, Install: []string{"dnf", "install", "-y"}, Pattern: rpmName},
	{Name: "yum", Probe: "yum", System: true, Install: []string{"yum", "install", "-y"}, Pattern: rpmName},
	{Name: "zypper", Probe: "zypper", System: true, Install: []string{"zypper", "--non-interactive", "install"}, Pattern: rpmName},
	{Name: "pacman", Probe: "pacman", System: true, Install: []string{"pacman", "-S", "--noconfirm", "--needed"},
		Pattern: regexp.MustCompile(`^[a-z0-9_+][a-z0-9@._+-]*$`)},
	{Name: "apk", Probe: "apk", System: true, Install: []string{"apk", "add", "--no-progress"},
		Pattern: regexp.MustCompile(`^[a-z0-9][a-z0-9._+-]*([<>~]?=[A-Za-z0-9._-]+)?$`)},
	{Name: "brew", Probe: "brew", System: true, Install: []string{"brew", "install"},
		Pattern: regexp.MustCompile(`^[a-z0-9][a-z0-9@._+-]*(/[a-z0-9][a-z0-9@._+-]*){0,2}$`)},
	{Name: "pip", Probe: "python3", Install: []string{"python3", "-m", "pip", "install", "--disable-pip-version-check", "--no-input"}, Pattern: pipName},
	{Name: "npm", Probe: "npm", Install: []string{"npm", "install", "--global", "--no-fund", "--no-audit"},
		Pattern: regexp.MustCompile(`^(@[a-z0-9][a-z0-9._-]*/)?[a-z0-9][a-z0-9._-]*(@[A-Za-z0-9.^~<>=*+-]+)?$`)},
}

var (
	// rpmName is a package name with an optional version, as dnf, yum and
	// zypper take it (name, name-1.2, name.x86_64).
	rpmName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.+:~-]*$`)
	// pipName is a PEP 508 name with extras and version specifiers; no
	// URLs, paths or options.
	pipName = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?(\[[A-Za-z0-9._,-]+\])?((==|>=|<=|~=|!=|>|<)[A-Za-z0-9.*+!-]+(,(==|>=|<=|~=|!=|>|<)[A-Za-z0-9.*+!-]+)*)?$`)
	// condaName is a conda package spec: name[=version[=build]] or with
	// comparisons.
	condaName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*([=<>!]=?[A-Za-z0-9_.*+-]+)*$`)
	// imageName is a container image reference; at most maxImageName
	// bytes, which checkImages checks apart (a counted repetition compiles
	// to that many copies of its class, at every start).
	imageName = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._/:@-]*$`)
)

// maxPackages bounds how many names one call installs.
const maxPackages = 100

// manager returns the manager named name.
func manager(name string) (Manager, bool) {
	for _, m := range Managers {
		if m.Name == name {
			return m, true
		}
	}
	return Manager{}, false
}

// checkNames validates names against pattern, saying which is refused and
// why.
// maxImageName is the longest image reference checkImages accepts.
const maxImageName = 255

// checkImages validates image references as checkNames does names.
func checkImages(names []string) error {
	for _, n := range names {
		if len(n) > maxImageName {
			return fmt.Errorf("%q is not a valid image name for this manager (names cannot start with '-' or hold spaces, paths, URLs or shell syntax)", n)
		}
	}
	return checkNames("image", names, imageName)
}

func checkNames(kind string, names []string, pattern *regexp.Regexp) error {
	if len(names) > maxPackages {
		return fmt.Errorf("at most %d %s per call", maxPackages, kind)
	}
	for _, n := range names {
		if n == "" || !pattern.MatchString(n) || strings.Contains(n, "..") || strings.Contains(n, "//") {
			return fmt.Errorf("%q is not a valid %s name for this manager (names cannot start with '-' or hold spaces, paths, URLs or shell syntax)", n, kind)
		}
	}
	return nil
}

// InstallArgv returns the argv that installs names with m, after
// validating the names. extra are options the operator configured for the
// manager (pip's PipOptions), placed before the names.
func InstallArgv(m Manager, names []string, extra []string) ([]string, error) {
	if len(names) == 0 {
		return nil, fmt.Errorf("no packages given")
	}
	if err := checkNames("package", names, m.Pattern); err != nil {
		return nil, err
	}
	argv := append([]string{}, m.Install...)
	if m.Name == "pip" {
		argv = append(append(argv, extra...), "--")
	}
	return append(argv, names...), nil
}
