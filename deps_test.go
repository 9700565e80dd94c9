package rigout_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// goList runs go list -deps with a template over the given packages.
func goList(t *testing.T, format string, pkgs ...string) []string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("SKIP: the go tool is not on PATH; the dependency rules are unchecked")
	}
	args := append([]string{"list", "-deps", "-f", format}, pkgs...)
	out, err := exec.Command(goTool, args...).Output()
	if err != nil {
		t.Fatalf("go list %v: %v", pkgs, err)
	}
	return strings.Fields(string(out))
}

func hasPrefix(dep, pkg string) bool { return dep == pkg || strings.HasPrefix(dep, pkg+"/") }

// TestRootDependencies: the root package is the gateway alone. It knows
// mcp-go, auth and the audit interfaces, never an executor, the command
// policy or a database.
func TestRootDependencies(t *testing.T) {
	deps := goList(t, "{{.ImportPath}}", ".")
	if len(deps) < 10 {
		t.Fatalf("implausible dependency list: %v", deps)
	}
	forbidden := []string{
		"os/exec",
		"github.com/rigout/rigout/exec",
		"github.com/rigout/rigout/validate",
		"github.com/rigout/rigout/gate",
		"github.com/rigout/rigout/tools",
		"github.com/rigout/rigout/federation",
		"github.com/rigout/rigout/audit/sqlite",
		"github.com/mattn/go-sqlite3",
		"mvdan.cc/sh/v3",
		"golang.org/x/crypto/ssh",
	}
	for _, d := range deps {
		for _, f := range forbidden {
			if hasPrefix(d, f) {
				t.Errorf("the root package depends on %s", d)
			}
		}
	}
}

// TestToolPackagesUseThePublicAPI: tool families are built on the root's
// exported API exactly as an embedder's tools are. They reach no internal
// package of the module, do not talk to mcp-go's server themselves, and
// link no database.
func TestToolPackagesUseThePublicAPI(t *testing.T) {
	pkgs := goList(t, "{{if not .Standard}}{{.ImportPath}}{{end}}", "./tools/...", "./gate")
	families := 0
	for _, p := range pkgs {
		if hasPrefix(p, "github.com/rigout/rigout/tools") {
			families++
		}
	}
	if families < 3 {
		t.Fatalf("found %d tool packages: %v", families, pkgs)
	}
	// Each package on its own, so a violation names the package: what it
	// imports itself, then what it links.
	for _, p := range pkgs {
		if !hasPrefix(p, "github.com/rigout/rigout/tools") && p != "github.com/rigout/rigout/gate" {
			continue
		}
		out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, p).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", p, err)
		}
		for _, d := range strings.Fields(string(out)) {
			switch {
			case hasPrefix(d, "github.com/rigout/rigout/internal"):
				t.Errorf("%s imports %s: tools use the root's exported API", p, d)
			case hasPrefix(d, "github.com/mark3labs/mcp-go/server"), hasPrefix(d, "github.com/mark3labs/mcp-go/client"):
				t.Errorf("%s imports %s: only the root package and transport speak to mcp-go's server", p, d)
			}
		}
		for _, d := range goList(t, "{{.ImportPath}}", p) {
			if hasPrefix(d, "github.com/rigout/rigout/audit/sqlite") || hasPrefix(d, "github.com/mattn/go-sqlite3") {
				t.Errorf("%s links the SQLite ledger (%s)", p, d)
			}
		}
	}
}

// TestNoCgoForEmbedders: importing the root package or any tool family
// links no cgo outside the standard library.
func TestNoCgoForEmbedders(t *testing.T) {
	const cgo = "{{if not .Standard}}{{if .CgoFiles}}{{.ImportPath}}{{end}}{{end}}"
	for _, p := range goList(t, cgo, ".", "./tools/...", "./gate", "./audit") {
		t.Errorf("%s uses cgo", p)
	}
	// The check sees cgo where there is some: the SQLite ledger links it.
	if got := goList(t, cgo, "./audit/sqlite"); len(got) == 0 {
		t.Error("go list found no cgo under the SQLite ledger: the check is blind")
	}
}

// TestLocalOnlyEmbedderLinksNoSSH: an embedder that runs commands only on
// this machine links no SSH code. The root, exec (whose exec.LocalHosts
// the families use without SSH), every tool family but those about SSH
// (files over SFTP, hosts), sessions, the command gate, the SQLite ledger,
// transport, the test harness and examples/localonly link neither
// x/crypto/ssh, pkg/sftp, the ssh_config parser nor exec/remote, the SSH
// side of exec; exec never imports exec/remote.
func TestLocalOnlyEmbedderLinksNoSSH(t *testing.T) {
	ssh := []string{
		"golang.org/x/crypto/ssh",
		"github.com/pkg/sftp",
		"github.com/kevinburke/ssh_config",
		"github.com/rigout/rigout/exec/remote",
	}
	localOnly := []string{
		".", "./exec", "./sessions", "./gate", "./audit/sqlite", "./transport", "./rigouttest",
		"./tools/shell", "./tools/process", "./tools/terminal", "./tools/docker", "./tools/packages",
		"./tools/system", "./tools/activity", "./tools/credentials",
		"./examples/localonly",
	}
	for _, p := range localOnly {
		deps := goList(t, "{{.ImportPath}}", p)
		if len(deps) < 10 {
			t.Fatalf("%s: implausible dependency list: %v", p, deps)
		}
		for _, d := range deps {
			for _, f := range ssh {
				if hasPrefix(d, f) {
					t.Errorf("%s links %s: a local-only embedder must link no SSH code", p, d)
				}
			}
		}
	}
	// The check sees SSH code where there is some: the SSH package links
	// all of it, and the binary's assembly links the SSH package.
	for _, p := range []string{"./exec/remote", "./assembly"} {
		deps := goList(t, "{{.ImportPath}}", p)
		for _, f := range ssh {
			if p == "./exec/remote" && f == "github.com/rigout/rigout/exec/remote" {
				continue
			}
			if !slices.ContainsFunc(deps, func(d string) bool { return hasPrefix(d, f) }) {
				t.Errorf("go list finds no %s under %s: the check is blind", f, p)
			}
		}
	}
}

// TestConfigDependencies: the configuration file's package reads, checks
// and writes configurations without linking what runs commands: no
// executor, no tool family, no SSH, no database, no assembly. A program
// that edits rigout configurations stays small.
func TestConfigDependencies(t *testing.T) {
	deps := goList(t, "{{.ImportPath}}", "./config")
	if len(deps) < 10 {
		t.Fatalf("implausible dependency list: %v", deps)
	}
	// os/exec is linked through package credentials (its command
	// backend), whose Spec the file's credentials section is.
	forbidden := []string{
		"github.com/rigout/rigout/exec",
		"github.com/rigout/rigout/gate",
		"github.com/rigout/rigout/tools",
		"github.com/rigout/rigout/sessions",
		"github.com/rigout/rigout/federation",
		"github.com/rigout/rigout/assembly",
		"github.com/rigout/rigout/audit/sqlite",
		"github.com/rigout/rigout/audit/postgres",
		"github.com/mattn/go-sqlite3",
		"golang.org/x/crypto/ssh",
	}
	for _, d := range deps {
		for _, f := range forbidden {
			if hasPrefix(d, f) {
				t.Errorf("package config depends on %s", d)
			}
		}
	}
}

// TestClientConfigDependencies: the package that writes MCP clients'
// entries is a leaf. It renders text and edits one file: it starts no
// process and links no executor, gate, SSH, database, mcp-go or gateway,
// so a program that only connects clients stays small.
func TestClientConfigDependencies(t *testing.T) {
	deps := goList(t, "{{.ImportPath}}", "./clientconfig")
	if len(deps) < 10 || !slices.Contains(deps, "encoding/json") {
		t.Fatalf("implausible dependency list: %v", deps)
	}
	const self = "github.com/rigout/rigout/clientconfig"
	forbidden := []string{
		"os/exec",
		"github.com/mark3labs/mcp-go",
		"github.com/mattn/go-sqlite3",
		"github.com/jackc/pgx",
		"golang.org/x/crypto/ssh",
		"github.com/pkg/sftp",
		"mvdan.cc/sh/v3",
	}
	for _, d := range deps {
		// Any other package of the module, the gateway's included, but
		// an internal helper that itself links only the standard library
		// (the shell quoter, the atomic file writer).
		if hasPrefix(d, "github.com/rigout/rigout") && d != self && !stdlibLeaf(t, d) {
			t.Errorf("package clientconfig depends on %s", d)
		}
		for _, f := range forbidden {
			if hasPrefix(d, f) {
				t.Errorf("package clientconfig depends on %s", d)
			}
		}
	}
}

// stdlibLeaf reports whether pkg is an internal package of the module
// that links nothing but the standard library.
func stdlibLeaf(t *testing.T, pkg string) bool {
	t.Helper()
	if !strings.Contains(pkg, "/internal/") {
		return false
	}
	return slices.Equal(goList(t, "{{if not .Standard}}{{.ImportPath}}{{end}}", pkg), []string{pkg})
}

// TestNothingImportsTheAssembly: the assembly is the top of the library.
// It may import every package of the module; no package of the module
// imports it but the binary and the examples.
func TestNothingImportsTheAssembly(t *testing.T) {
	const assembly = "github.com/rigout/rigout/assembly"
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("SKIP: the go tool is not on PATH; the dependency rules are unchecked")
	}
	// One line per package of the module: its path, then its imports.
	out, err := exec.Command(goTool, "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 20 {
		t.Fatalf("implausible package list: %v", lines)
	}
	seen := false
	for _, line := range lines {
		f := strings.Fields(line)
		p := f[0]
		if hasPrefix(p, assembly) {
			continue
		}
		for _, d := range f[1:] {
			if d != assembly {
				continue
			}
			seen = true
			if !hasPrefix(p, "github.com/rigout/rigout/cmd") && !hasPrefix(p, "github.com/rigout/rigout/examples") {
				t.Errorf("%s imports the assembly: only cmd/ and examples/ sit above it", p)
			}
		}
	}
	if !seen {
		t.Error("nothing imports the assembly, not even cmd/rigout: the check is blind")
	}
}

// TestHarnessIsPublic: rigouttest, the test harness embedders use,
// imports no internal package of the module, which another module could
// not name (the public packages it imports may use their own).
func TestHarnessIsPublic(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, "./rigouttest").Output()
	if err != nil {
		t.Fatalf("go list ./rigouttest: %v", err)
	}
	imports := strings.Fields(string(out))
	if !slices.Contains(imports, "github.com/rigout/rigout") {
		t.Fatalf("implausible import list: %v", imports)
	}
	for _, d := range imports {
		if strings.Contains(d, "/internal/") || strings.HasSuffix(d, "/internal") {
			t.Errorf("rigouttest imports %s, which another module cannot import", d)
		}
	}
}
