package redact

import "strings"

// Secret words. A name is secret when it ends in a word of subWords
// ("PGPASSWORD", "client_secret", "X-Auth-Token"), or in "key" after a
// secret-bearing qualifier (api_key, SECRET_KEY, AccountKey), or when its
// last segment, after '_', '-' or '.', is one of segWords ("DB_PASS",
// "MYSQL_PWD"): "bypass", "compass" and "OLDPWD" are not. "key" alone is not
// a secret word: "keyboard=us", "key=value".
var (
	subWords = []string{"password", "passwd", "passphrase", "passcode", "secret",
		"token", "credential", "credentials", "signature"}
	keyQualifiers = []string{"api", "access", "secret", "private", "account",
		"encryption", "signing", "master", "client", "session", "shared", "auth",
		"license", "app", "hmac", "webhook", "deploy", "ssh", "jwt"}
	segWords = []string{"pass", "pwd", "pw", "auth", "oauth", "sig", "cred", "creds",
		"passin", "passout"}
)

// secretName reports whether name (ASCII, any case) names a secret, and
// whether it is a segment word alone ("PASS", "pwd"), which is secret only
// in some places: "PASS=x" is, the "--- PASS: TestX" of go test is not.
func secretName(name string) (secret, bare bool) {
	n := strings.TrimLeft(name, "-.")
	for _, w := range subWords {
		if hasSuffixFold(n, w) {
			return true, false
		}
	}
	if hasSuffixFold(n, "key") {
		k := n[:len(n)-3]
		if l := len(k); l > 0 && (k[l-1] == '_' || k[l-1] == '-' || k[l-1] == '.') {
			k = k[:l-1]
		}
		for _, q := range keyQualifiers {
			if hasSuffixFold(k, q) {
				return true, false
			}
		}
	}
	for _, w := range segWords {
		if len(n) == len(w) && hasSuffixFold(n, w) {
			return true, true
		}
		if l := len(n) - len(w) - 1; l >= 0 && hasSuffixFold(n, w) && (n[l] == '_' || n[l] == '-' || n[l] == '.') {
			return true, false
		}
	}
	return false, false
}

// hasSuffixFold reports whether s ends in the lower-case ASCII word w, in
// any case.
func hasSuffixFold(s, w string) bool {
	if len(s) < len(w) {
		return false
	}
	s = s[len(s)-len(w):]
	for i := 0; i < len(w); i++ {
		if lower(s[i]) != w[i] {
			return false
		}
	}
	return true
}

// maskWords masks the values of secret names in line: NAME=value and
// NAME: value, "NAME": "value" in JSON, and --flag value. It is a scanner,
// not a regular expression: at each '=' or ':' it reads the name before it
// and the value after it, in time linear in the line.
func maskWords(line string) string {
	var b strings.Builder
	done := 0 // line[:done] is in b
	mask := func(lo, hi int) {
		b.WriteString(line[done:lo])
		b.WriteString(Mask)
		done = hi
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '=' || c == ':':
			lo, hi, next := assignedValue(line, i)
			if lo >= 0 && lo >= done {
				mask(lo, hi)
			}
			i = max(i, next-1)
		case c == '-' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t'):
			lo, hi := flagValue(line, i)
			if lo >= 0 && lo >= done {
				mask(lo, hi)
				i = hi - 1
			}
		}
	}
	if done == 0 {
		return line
	}
	b.WriteString(line[done:])
	return b.String()
}

// assignedValue reads the name before the separator at line[sep] and the
// value after it. If the name is secret and the value not ordinary, it
// returns the part to mask [lo, hi); otherwise lo is -1. next is where
// scanning goes on.
func assignedValue(line string, sep int) (lo, hi, next int) {
	next = sep + 1
	// The name: a run of name bytes before optional blanks, perhaps quoted.
	e := sep
	for e > 0 && (line[e-1] == ' ' || line[e-1] == '\t') {
		e--
	}
	quote := byte(0)
	if e > 0 && (line[e-1] == '"' || line[e-1] == '\'') {
		quote = line[e-1]
		e--
	}
	s := e
	for s > 0 && isNameByte(line[s-1]) {
		s--
	}
	if s == e || quote != 0 && (s == 0 || line[s-1] != quote) {
		return -1, -1, next
	}
	name := line[s:e]
	secret, bare := secretName(name)
	switch {
	case quote != 0:
		// A JSON or YAML key: "pass": "x", and the Authorization header
		// in JSON, masked whole.
		secret = secret || line[sep] == ':' && (strings.EqualFold(name, "authorization") || strings.EqualFold(name, "proxy-authorization"))
	case bare && line[sep] != '=':
		secret = false
	}
	if !secret {
		return -1, -1, next
	}
	// The value: a quoted string, masked inside its quotes (up to the end of
	// the line when the closing quote was cut off), or a run up to a blank
	// or a separator.
	v := sep + 1
	for v < len(line) && (line[v] == ' ' || line[v] == '\t') {
		v++
	}
	if v == len(line) {
		return -1, -1, next
	}
	if q := line[v]; q == '"' || q == '\'' {
		lo, hi = v+1, len(line)
		next = len(line)
		for j := v + 1; j < len(line); j++ {
			if line[j] == '\\' && q == '"' {
				j++
				continue
			}
			if line[j] == q {
				hi, next = j, j+1
				break
			}
		}
	} else {
		// After a JSON key, an unquoted value is a number or a literal, and
		// '}' or ']' ends it.
		lo, hi = v, v
		for hi < len(line) && !isValueEnd(line[hi]) && (quote == 0 || line[hi] != '}' && line[hi] != ']') {
			hi++
		}
		next = hi
	}
	if value := line[lo:hi]; ordinary(value) || pathUnder(name, value) {
		return -1, -1, sep + 1
	}
	return lo, hi, next
}

// flagValue reads a flag at line[i] ('-') and the value after it: --password
// VALUE, --db-pass VALUE, openssl's -passin pass:VALUE. If the flag names a
// secret and the value is not another flag or ordinary, it returns the part
// to mask; otherwise lo is -1.
func flagValue(line string, i int) (lo, hi int) {
	j := i + 1
	if j < len(line) && line[j] == '-' {
		j++
	}
	s := j
	for j < len(line) && (isAlnum(line[j]) || line[j] == '_' || line[j] == '-') {
		j++
	}
	if j == s || j == len(line) || (line[j] != ' ' && line[j] != '\t') {
		return -1, -1
	}
	if secret, _ := secretName(line[s:j]); !secret {
		return -1, -1
	}
	for j < len(line) && (line[j] == ' ' || line[j] == '\t') {
		j++
	}
	lo = j
	for j < len(line) && line[j] != ' ' && line[j] != '\t' && line[j] != '\r' {
		j++
	}
	if lo == j || line[lo] == '-' || ordinary(line[lo:j]) {
		return -1, -1
	}
	return lo, j
}

// pathUnder reports whether value is a path under a name that holds one:
// PWD=/home/x is the working directory, GOOGLE_APPLICATION_CREDENTIALS
// names a file.
func pathUnder(name, value string) bool {
	if !strings.EqualFold(name, "pwd") && !hasSuffixFold(name, "credentials") && !hasSuffixFold(name, "creds") {
		return false
	}
	return strings.HasPrefix(value, "/") || strings.HasPrefix(value, "~") || strings.HasPrefix(value, "./")
}

func isNameByte(c byte) bool { return isAlnum(c) || c == '_' || c == '.' || c == '-' }

func isValueEnd(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', '\v', '\f', '"', '\'', '&', ';', ',':
		return true
	}
	return false
}
