package files

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/credentials"
	"github.com/rigout/rigout/redact"
)

// secretsProperty is the input property file_operations and search_files
// have when the family has a credential store (Config.Credentials).
const secretsProperty = `"secrets": {"type": "object", "additionalProperties": {"type": "string", "minLength": 1}, "description": "Credentials by reference: {\"NAME\": \"alias\"} (aliases: credentials list). write/append content and edit old_string/new_string get ${secret.NAME} replaced by the value; every result is masked of it."},
    `

// withSecrets adds the secrets property to schema (before "host") when
// the family has a credential store; without one the schema is unchanged,
// which keeps the default tools/list small.
func (f *Family) withSecrets(schema []byte) []byte {
	if f.cfg.Credentials == nil {
		return schema
	}
	return []byte(strings.Replace(string(schema), `"host"`, secretsProperty+`"host"`, 1))
}

// placeholderRE matches a placeholder: ${secret.NAME}.
var placeholderRE = regexp.MustCompile(`\$\{secret\.([^}]*)\}`)

// nameRE is what a placeholder's NAME may be.
// Its length, at most 64, is checked apart: a counted repetition would
// compile to 64 copies of its class at every start.
var nameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// callSecrets are the credentials one call uses, by NAME, and the set
// that masks them (and the values of remembered files) in what it shows.
type callSecrets struct {
	values map[string]string // NAME → value
	names  map[string]string // NAME → alias
	mask   *redact.Set       // nil: nothing to mask
}

// redact masks s, or returns it as is when there is nothing to mask.
func (cs *callSecrets) redact(s string) string {
	if cs == nil || cs.mask == nil {
		return s
	}
	return cs.mask.Redact(s)
}

// maskFunc returns the line filter reads and searches apply before they
// cut or match a line, or nil.
func (cs *callSecrets) maskFunc() func(string) string {
	if cs == nil || cs.mask == nil {
		return nil
	}
	return cs.mask.Redact
}

// maskForms are the strings masked for a value: the value, and each of
// its lines long enough to mask, so a read that shows part of a
// multi-line value (a PEM key cut by offset/limit) still masks each line.
func maskForms(v string) []string {
	out := []string{v}
	if strings.ContainsAny(v, "\r\n") {
		for _, l := range strings.FieldsFunc(v, func(r rune) bool { return r == '\n' || r == '\r' }) {
			if len(strings.TrimSpace(l)) >= redact.MinSecretLen {
				out = append(out, l)
			}
		}
	}
	return out
}

// useSecrets resolves the call's secrets argument (NAME → alias) for the
// hosts it reaches, and adds the values of the files of paths the family
// remembers writing with credentials; every value found is masked in the
// call's result, error and ledger detail. A non-nil result is the call's
// answer (refused or failed); the error text names aliases, never values.
func (f *Family) useSecrets(ctx context.Context, call *rigout.Call, refs map[string]string, hosts []string, paths []string) (*callSecrets, *mcp.CallToolResult) {
	auto := f.written.aliases(hosts, paths)
	if len(refs) == 0 && len(auto) == 0 {
		return nil, nil
	}
	store := f.cfg.Credentials
	if store == nil {
		call.Outcome.Status = audit.StatusInvalid
		return nil, rigout.ErrorResult("this gateway has no credential store: `secrets` cannot be used (configure \"credentials\")")
	}
	cs := &callSecrets{values: map[string]string{}, names: map[string]string{}}
	names := make([]string, 0, len(refs))
	for n := range refs {
		names = append(names, n)
	}
	sort.Strings(names)
	var masks, used []string
	for _, n := range names {
		alias := refs[n]
		if len(n) > 64 || !nameRE.MatchString(n) {
			call.Outcome.Status = audit.StatusInvalid
			return nil, rigout.ErrorResult("secrets: %q is not a valid name: want letters, digits and '_', not starting with a digit", n)
		}
		for _, h := range hosts {
			if err := store.Allow(alias, h, call.Tool.Name); err != nil {
				var de *credentials.DeniedError
				if errors.As(err, &de) {
					call.Outcome.Status = audit.StatusDenied
				} else {
					call.Outcome.Status = audit.StatusInvalid
				}
				return nil, rigout.ErrorResult("secrets %s: %v", n, err)
			}
		}
		v, err := store.Resolve(ctx, alias)
		if err != nil {
			call.Outcome.Status = audit.StatusError
			return nil, rigout.ErrorResult("secrets %s: %v", n, err)
		}
		if len(v.Reveal()) < redact.MinSecretLen {
			call.Outcome.Status = audit.StatusError
			return nil, rigout.ErrorResult("secrets %s: the value of alias %q is shorter than %d bytes, too short to be masked, so it is not used", n, alias, redact.MinSecretLen)
		}
		cs.values[n], cs.names[n] = v.Reveal(), alias
		masks = append(masks, maskForms(v.Reveal())...)
		used = append(used, alias+" as "+n)
	}
	// A file this gateway wrote with a credential is masked of it when
	// read again: masking is not a use, so the alias need not allow this
	// tool, but a value that cannot be resolved to mask means the file is
	// not shown.
	for _, alias := range auto {
		v, err := store.Resolve(ctx, alias)
		if err != nil {
			call.Outcome.Status = audit.StatusError
			return nil, rigout.ErrorResult("this file was written with credential %q, which cannot be resolved to mask it now, so it is not shown: %v", alias, err)
		}
		if len(v.Reveal()) >= redact.MinSecretLen {
			masks = append(masks, maskForms(v.Reveal())...)
		}
	}
	if len(masks) > 0 {
		if err := call.MaskSecrets(masks...); err != nil {
			call.Outcome.Status = audit.StatusError
			return nil, rigout.ErrorResult("secrets: %v", err)
		}
		set, err := redact.New(masks...)
		if err != nil {
			call.Outcome.Status = audit.StatusError
			return nil, rigout.ErrorResult("secrets: %v", err)
		}
		cs.mask = set
	}
	if len(used) > 0 {
		if call.Outcome.Detail == nil {
			call.Outcome.Detail = map[audit.DetailKey]string{}
		}
		call.Outcome.Detail[audit.DetailCredentials] = strings.Join(used, ", ")
	}
	if len(auto) > 0 {
		if call.Outcome.Detail == nil {
			call.Outcome.Detail = map[audit.DetailKey]string{}
		}
		call.Outcome.Detail[audit.DetailMasked] = strings.Join(auto, ", ")
	}
	return cs, nil
}

// substitute replaces each ${secret.NAME} in s by NAME's value. A
// placeholder whose NAME the call's secrets do not give is refused: the
// error names it. used reports whether s held a placeholder.
func (cs *callSecrets) substitute(field, s string) (out string, used bool, err error) {
	if cs == nil || len(cs.values) == 0 {
		return s, false, nil
	}
	var bad string
	out = placeholderRE.ReplaceAllStringFunc(s, func(m string) string {
		n := placeholderRE.FindStringSubmatch(m)[1]
		v, ok := cs.values[n]
		if !ok {
			if bad == "" {
				bad = n
			}
			return m
		}
		used = true
		return v
	})
	if bad != "" {
		known := make([]string, 0, len(cs.values))
		for n := range cs.values {
			known = append(known, n)
		}
		sort.Strings(known)
		return "", false, fmt.Errorf("%s names ${secret.%s}, which `secrets` does not give (it gives %s)", field, bad, strings.Join(known, ", "))
	}
	return out, used, nil
}

// aliasesUsed returns the aliases of the NAMEs s's placeholders name.
func (cs *callSecrets) aliasesUsed(s string) []string {
	if cs == nil {
		return nil
	}
	var out []string
	for _, m := range placeholderRE.FindAllStringSubmatch(s, -1) {
		if a, ok := cs.names[m[1]]; ok && !contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// maxRemembered bounds the files the family remembers writing with
// credentials.
const maxRemembered = 4096

// writtenFiles remembers, for the family's life, which files it wrote
// with credentials templated in (host and path → aliases), so later reads
// of them are masked without the caller naming the credentials.
type writtenFiles struct {
	mu sync.Mutex
	m  map[string][]string
}

func fileKey(host, p string) string { return strings.ToLower(host) + "\x00" + p }

// remember records that p on host holds the values of aliases.
func (w *writtenFiles) remember(host, p string, aliases []string) {
	if len(aliases) == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = map[string][]string{}
	}
	k := fileKey(host, p)
	if _, ok := w.m[k]; !ok && len(w.m) >= maxRemembered {
		for old := range w.m { // forget one: the map has no order
			delete(w.m, old)
			break
		}
	}
	for _, a := range aliases {
		if !contains(w.m[k], a) {
			w.m[k] = append(w.m[k], a)
		}
	}
}

// forget drops p on host (deleted), or moves its record to dest.
func (w *writtenFiles) forget(host, p, dest string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	k := fileKey(host, p)
	a, ok := w.m[k]
	if !ok {
		return
	}
	delete(w.m, k)
	if dest != "" {
		w.m[fileKey(host, dest)] = a
	}
}

// aliases returns the aliases recorded for paths (and, for a directory,
// every file under it) on hosts.
func (w *writtenFiles) aliases(hosts, paths []string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for k, as := range w.m {
		h, p, _ := strings.Cut(k, "\x00")
		for _, host := range hosts {
			if strings.ToLower(host) != h {
				continue
			}
			for _, q := range paths {
				if p == q || within(p, q) {
					for _, a := range as {
						if !contains(out, a) {
							out = append(out, a)
						}
					}
				}
			}
		}
	}
	sort.Strings(out)
	return out
}
