// Package redact masks secrets in text on its way out of the gateway:
// command output, file contents, error messages and audit rows.
//
// [String] recognises secrets by context (NAME=value where NAME ends in a
// secret word, Authorization headers, URL passwords, PEM private keys) and
// by shape (well-known token formats). It is a leaf package: it imports
// nothing of rigout's, so the gateway's root package and every tool family
// can use it.
package redact

import (
	"regexp"
	"strings"
)

// Mask replaces every secret the redactor finds.
const Mask = "***"

// The redaction tables are constant: compiled once, never modified.
var (
	// secretAssign matches NAME=value and NAME: value where NAME ends in a
	// secret-bearing word at a word boundary. "monkey=banana" does not match:
	// "key" alone is not a secret word, only api_key, access_key, private_key.
	secretAssign = regexp.MustCompile(`(?i)\b([A-Za-z0-9_.\-]*?(?:password|passwd|passphrase|secret|token|api[_\-]?key|access[_\-]?key|private[_\-]?key|client[_\-]?secret|credentials?))(\s*[=:]\s*)("[^"\r\n]*"|'[^'\r\n]*'|[^\s"'&;,]+)`)

	// jsonSecret matches "password": "value" in JSON text.
	jsonSecret = regexp.MustCompile(`(?i)("[A-Za-z0-9_.\-]*?(?:password|passwd|passphrase|secret|token|api[_\-]?key|access[_\-]?key|private[_\-]?key|credentials?)"\s*:\s*)"(?:[^"\\\r\n]|\\.)*"`)

	// authHeader matches bearer and basic credentials wherever they appear.
	authHeader = regexp.MustCompile(`(?i)\b(bearer|basic)(\s+)[A-Za-z0-9._~+/\-]+=*`)

	// authorization matches the credential of an Authorization header with
	// any scheme ("Authorization: token ghp_…").
	authorization = regexp.MustCompile(`(?i)\b((?:proxy-)?authorization\s*:\s*(?:[A-Za-z][A-Za-z0-9_\-]*\s+)?)[^\s"',;]+`)

	// secretFlag matches a command-line flag followed by its secret value:
	// --password hunter2, --token abc.
	secretFlag = regexp.MustCompile(`(?i)(\s--?(?:[a-z0-9]+[_\-])*(?:password|passwd|passphrase|secret|token|api[_\-]?key|access[_\-]?key|private[_\-]?key)\s+)([^\s-][^\s]*)`)

	// urlCredentials matches the password in scheme://user:password@host.
	urlCredentials = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.\-]*://[^\s:/@]+:)[^\s@/]+@`)

	// privateKeyBlock matches a PEM private key, or its start when the end was cut off.
	privateKeyBlock = regexp.MustCompile(`-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----(?s:.*?)(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\z)`)

	// knownTokens matches credential formats that are secret by their shape.
	knownTokens = regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}|AKIA[0-9A-Z]{16}|xox[abposr]-[A-Za-z0-9\-]{10,}|sk-[A-Za-z0-9_\-]{20,}|glpat-[A-Za-z0-9_\-]{20,})\b`)
)

// String returns s with secrets replaced by [Mask]: NAME=value and NAME: value
// assignments whose name ends in a secret word (password, token, secret,
// api_key, …), the same inside JSON, command-line flags such as
// --password VALUE, Bearer and Basic credentials and any Authorization
// header, passwords in URLs, PEM private key blocks and well-known token
// formats. Ordinary words are left alone: "monkey=banana", "tokenizer" and
// "token_count=5" pass unchanged.
//
// String is safe for concurrent use.
func String(s string) string {
	if !mayHoldSecret(s) {
		return s
	}
	// Each pass runs only where its pattern matches: a replacement copies
	// the whole text, and command output can be megabytes long.
	replace := func(re *regexp.Regexp, repl string) {
		if re.MatchString(s) {
			s = re.ReplaceAllString(s, repl)
		}
	}
	replace(privateKeyBlock, "-----BEGIN ${1}PRIVATE KEY-----\n"+Mask+"\n-----END ${1}PRIVATE KEY-----")
	replace(jsonSecret, `${1}"`+Mask+`"`)
	if secretAssign.MatchString(s) {
		s = secretAssign.ReplaceAllStringFunc(s, redactAssignment)
	}
	replace(authHeader, "${1}${2}"+Mask)
	replace(authorization, "${1}"+Mask)
	replace(secretFlag, "${1}"+Mask)
	replace(urlCredentials, "${1}"+Mask+"@")
	replace(knownTokens, Mask)
	return s
}

// redactAssignment keeps the name and separator of one secretAssign match
// and masks the value.
func redactAssignment(m string) string {
	sub := secretAssign.FindStringSubmatch(m)
	if sub == nil {
		return m
	}
	return sub[1] + sub[2] + Mask
}

// mayHoldSecret is a cheap pre-filter so that ordinary output skips the
// regular expressions entirely.
func mayHoldSecret(s string) bool {
	if strings.ContainsAny(s, "=:") || strings.Contains(s, "-----BEGIN") {
		return true
	}
	l := strings.ToLower(s)
	for _, w := range []string{"bearer", "basic", "authorization", "password", "passwd", "passphrase", "secret", "token", "key", "ghp_", "gho_", "ghs_", "ghu_", "ghr_", "github_pat_", "akia", "xox", "sk-", "glpat-"} {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}
