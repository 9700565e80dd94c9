package main

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/rigout/rigout"
)

// linkedCommit is the commit a release build names with
// -ldflags "-X main.linkedCommit=$(git rev-parse HEAD)": the toolchain's own
// VCS stamp is missing from builds in a git worktree, with GOFLAGS=-buildvcs=false
// and from a source archive. Set only by the linker; never written.
var linkedCommit string

// linkedVersion and linkedDate are the release version and build date
// (RFC 3339, UTC) the release command stamps with -ldflags "-X
// main.linkedVersion=… -X main.linkedDate=…" (go run ./internal/release).
// Set only by the linker; never written.
var linkedVersion, linkedDate string

// releaseVersion is the version this binary reports everywhere (`rigout
// version`, initialize, /health, runtime.json): the stamped release, or
// the library's Version in an unstamped build.
func releaseVersion() string {
	if linkedVersion != "" {
		return linkedVersion
	}
	return rigout.Version
}

// buildInfo is what `rigout version` reports: the release, and from the
// build information the Go toolchain embeds, the commit it was built from.
type buildInfo struct {
	Version    string `json:"version"`
	Commit     string `json:"commit,omitempty"`
	CommitTime string `json:"commit_time,omitempty"`
	BuildDate  string `json:"build_date,omitempty"` // stamped by the release command
	Modified   bool   `json:"modified,omitempty"`
	Go         string `json:"go"`
	CGO        bool   `json:"cgo"`
	Static     bool   `json:"static"` // linked with -extldflags -static
	Platform   string `json:"platform"`
}

func readBuildInfo() buildInfo {
	b := buildInfo{Version: releaseVersion(), BuildDate: linkedDate, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		b.Commit = linkedCommit
		return b
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.time":
			b.CommitTime = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		case "CGO_ENABLED":
			b.CGO = s.Value == "1"
		case "-ldflags":
			b.Static = containsStatic(s.Value)
		}
	}
	if b.Commit == "" {
		b.Commit = linkedCommit
	}
	return b
}

func containsStatic(ldflags string) bool { return strings.Contains(ldflags, "-static") }

// runVersion is `rigout version [--json]`.
func runVersion(args []string, stdout, stderr io.Writer) int {
	asJSON := len(args) == 1 && (args[0] == "--json" || args[0] == "-json")
	if len(args) > 0 && !asJSON {
		fmt.Fprintf(stderr, "rigout version: unexpected argument %q (want --json or nothing)\n", args[0])
		return 2
	}
	b := readBuildInfo()
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(b)
		return 0
	}
	commit := b.Commit
	switch {
	case commit == "":
		commit = "unknown commit"
	case b.Modified:
		commit += " (modified)"
	}
	link := "dynamically linked"
	switch {
	case b.Static:
		link = "static"
	case !b.CGO:
		link = "no cgo (pure-Go SQLite ledger)"
	}
	fmt.Fprintf(stdout, "rigout %s\ncommit %s", b.Version, commit)
	if b.CommitTime != "" {
		fmt.Fprintf(stdout, " from %s", b.CommitTime)
	}
	if b.BuildDate != "" {
		fmt.Fprintf(stdout, "\nbuilt %s", b.BuildDate)
	}
	fmt.Fprintf(stdout, "\n%s %s, %s\n", b.Go, b.Platform, link)
	return 0
}
