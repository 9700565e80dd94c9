package clientconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rigout/rigout/internal/atomicfile"
)

// A FormatError is a client's file [Merge] will not rewrite because it
// cannot read all of it: not a JSON object (JSONC's comments and trailing
// commas included), or a top key (mcpServers, servers) that is not an
// object. The file is left as it was.
type FormatError struct {
	Path string // the file
	Key  string // the top key that is not an object; "" when the file itself is not
	Err  error  // what encoding/json said
}

// Error says what is wrong with the file, as encoding/json found it.
func (e *FormatError) Error() string {
	if e.Key != "" {
		return fmt.Sprintf("%q is not an object: %v", e.Key, e.Err)
	}
	return fmt.Sprintf("not a JSON object (comments and trailing commas are not read): %v", e.Err)
}

// Unwrap returns encoding/json's error.
func (e *FormatError) Unwrap() error { return e.Err }

// Merge puts e under e.Name in the client's configuration file at path,
// keeping everything else, after copying the file to a timestamped backup
// beside it (path.bak-YYYYMMDDTHHMMSS.mmm, UTC). It reports the backup's
// path ("" when there was no file, or an empty one) and whether an entry
// of that name was replaced. Directories it creates are 0700; the file
// and the backup are written whole (a temporary file renamed) and
// owner-only.
//
// JSON files keep every other key and server (their values as they were,
// re-indented; keys come out sorted). Codex's TOML keeps every line
// byte for byte but those of the table [mcp_servers.NAME] and its
// sub-tables, which the entry's table replaces where it stood (or is
// appended). A file Merge cannot read whole is refused with a
// [*FormatError] and left untouched; so is the JSON client, which has no
// file.
func Merge(path string, e Entry) (backup string, replaced bool, err error) {
	if _, err := ParseClient(string(e.Client)); err != nil {
		return "", false, err
	}
	if e.Client == JSON {
		return "", false, errors.New("clientconfig: the json client has no configuration file")
	}
	if err := CheckName(e.Name); err != nil {
		return "", false, err
	}
	if e.Client == Codex && e.Snippet == "" || e.Client != Codex && e.Server == nil {
		return "", false, errors.New("clientconfig: an empty entry; make it with NewEntry")
	}
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", false, err
	}
	var out []byte
	if e.Client == Codex {
		out, replaced = mergeTOMLTable(old, "mcp_servers."+e.Name, e.Snippet)
	} else {
		top := "mcpServers"
		if e.Client == VSCode {
			top = "servers"
		}
		if out, replaced, err = mergeJSONServer(old, top, e.Name, e.Server); err != nil {
			var fe *FormatError
			if errors.As(err, &fe) {
				fe.Path = path
			}
			return "", false, err
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", false, err
	}
	if len(old) > 0 {
		backup = fmt.Sprintf("%s.bak-%s", path, time.Now().UTC().Format("20060102T150405.000"))
		if err := atomicfile.Write(backup, old); err != nil {
			return "", false, fmt.Errorf("backup: %w", err)
		}
	}
	return backup, replaced, atomicfile.Write(path, out)
}

// mergeJSONServer sets doc[top][name] = entry in the JSON object doc (an
// empty doc is {}), keeping every other key.
func mergeJSONServer(doc []byte, top, name string, entry map[string]any) ([]byte, bool, error) {
	root := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(doc)) > 0 {
		if err := json.Unmarshal(doc, &root); err != nil {
			return nil, false, &FormatError{Err: err}
		}
	}
	servers := map[string]json.RawMessage{}
	if raw, ok := root[top]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &servers); err != nil {
			return nil, false, &FormatError{Key: top, Err: err}
		}
	}
	_, replaced := servers[name]
	e, err := json.Marshal(entry)
	if err != nil {
		return nil, false, err
	}
	servers[name] = e
	if root[top], err = json.Marshal(servers); err != nil {
		return nil, false, err
	}
	out, err := json.MarshalIndent(root, "", "  ")
	if err != nil {
		return nil, false, err
	}
	return append(out, '\n'), replaced, nil
}

// mergeTOMLTable replaces the table [header] in doc (from its header line
// to the next table header) with table, or appends table; every other
// line stays as it was.
func mergeTOMLTable(doc []byte, header, table string) ([]byte, bool) {
	lines := strings.SplitAfter(string(doc), "\n")
	var out strings.Builder
	replaced, skipping := false, false
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "[") {
			h := strings.Trim(strings.SplitN(t, "#", 2)[0], "[] \t")
			switch {
			case h == header:
				skipping, replaced = true, true
				out.WriteString(table)
				continue
			case skipping && strings.HasPrefix(h, header+"."):
				continue // a sub-table of ours, such as [mcp_servers.rigout.env]
			default:
				skipping = false
			}
		}
		if !skipping {
			out.WriteString(l)
		}
	}
	s := out.String()
	if !replaced {
		if s != "" && !strings.HasSuffix(s, "\n") {
			s += "\n"
		}
		if s != "" {
			s += "\n"
		}
		s += table
	}
	return []byte(s), replaced
}
