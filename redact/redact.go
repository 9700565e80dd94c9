package redact

import (
	"regexp"
	"strings"
)

// Mask replaces every secret the redactor finds.
const Mask = "***"

// rule masks, in each match of re, the first of groups that took part in
// it, when check (if not nil) accepts the match and the value v of that
// group. Rules run on one line at a time, and only on lines that hold one
// of their triggers (see triggerList) and the byte need, if not 0.
type rule struct {
	id     uint32
	need   byte
	re     *regexp.Regexp
	groups []int
	check  func(line string, m []int, v string) bool
}

// Rule identities, for the trigger table. ruleWords is maskWords, the
// scanner for NAME=value, JSON fields and flags; the others are lineRules.
const (
	ruleWords uint32 = 1 << iota
	ruleNetrc
	ruleScheme
	ruleHeader
	ruleCurl
	ruleMySQL
	ruleSSHPass
	ruleURL
	ruleDSN
	ruleAWSPair
	ruleTokens
	ruleOpenAI
)

// lineRules are constant tables: compiled once, never modified. They run in
// this order on each line, after maskWords.
var lineRules = []rule{
	// .netrc: machine host login user password VALUE.
	{id: ruleNetrc, re: regexp.MustCompile(`(?i)\blogin[ \t]+\S+[ \t]+password[ \t]+(\S+)`), groups: []int{1}, check: notOrdinary},
	// Bearer and Basic credentials, when what follows looks like one.
	{id: ruleScheme, re: regexp.MustCompile(`(?i)\b(bearer|basic)[ \t]+([A-Za-z0-9._~+/\-]+=*)`), groups: []int{2}, check: schemeCredential},
	// The credential of an Authorization header, with or without a scheme.
	{id: ruleHeader, re: regexp.MustCompile(`(?i)\b(?:proxy-)?authorization[ \t]*:[ \t]*([A-Za-z][A-Za-z0-9_\-]*[ \t]+)?([^\s"',;]+)`),
		groups: []int{2}, check: headerCredential},
	// curl -u user:VALUE, mysql -pVALUE, sshpass -p VALUE.
	{id: ruleCurl, re: regexp.MustCompile(`\bcurl\b[^\r\n]*?[ \t](?:-u|--user)(?:[ \t]+|=)?['"]?[^\s:'"]+:([^\s'"]+)`), groups: []int{1}},
	{id: ruleMySQL, re: regexp.MustCompile(`\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)\b[^\r\n]*?[ \t]-p([^\s]+)`), groups: []int{1}},
	{id: ruleSSHPass, re: regexp.MustCompile(`\bsshpass\b[^\r\n]*?[ \t]-p[ \t]*([^\s]+)`), groups: []int{1}},
	// scheme://user:VALUE@host, and the Go MySQL DSN user:VALUE@tcp(host).
	{id: ruleURL, need: '@', re: regexp.MustCompile(`(?i)\b[a-z][a-z0-9+.\-]*://[^\s:/@]*:([^\s/?#]+)@`), groups: []int{1}},
	{id: ruleDSN, re: regexp.MustCompile(`\b[^\s:/@]+:([^\s@/]+)@(?:tcp|unix)\(`), groups: []int{1}},
	// A bare AWS secret access key written next to its access key ID (the
	// ID itself is masked by the next rule).
	{id: ruleAWSPair, re: regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}[ \t,;:|"'=]{1,8}([A-Za-z0-9/+]{40})`), groups: []int{1}, check: endsRun},
	// Token formats that are secret by their shape. Fakes are built in the
	// tests; the prefixes are the vendors' documented ones.
	{id: ruleTokens, re: regexp.MustCompile(`\b(?:` +
		`gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,}|` +
		`gl(?:pat|dt|rt|ptt)-[A-Za-z0-9_\-]{20,}|` +
		`(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}|` +
		`xox[abposre]-[A-Za-z0-9\-]{10,}|xapp-[0-9]-[A-Za-z0-9\-]{10,}|hooks\.slack\.com/services/[A-Za-z0-9/]+|` +
		`(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,}|whsec_[A-Za-z0-9]{24,}|` +
		`sk-ant-(?:api|admin)[0-9]{2}-[A-Za-z0-9_\-]{20,}|sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{20,}|` +
		`AIza[0-9A-Za-z_\-]{35}|GOCSPX-[A-Za-z0-9_\-]{28}|ya29\.[0-9A-Za-z_\-]{20,}|` +
		`eyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*|` +
		`npm_[A-Za-z0-9]{36}|pypi-Ag[A-Za-z0-9_\-]{50,}|` +
		`SK[0-9a-f]{32}|SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}|` +
		`AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}|` +
		`hf_[A-Za-z0-9]{34,}|dop_v1_[a-f0-9]{64}|shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32})`), groups: []int{0}},
	// Older OpenAI keys have no fixed prefix past "sk-": random text of
	// mixed case and digits ("sk-prod-cluster-eu-west" is a host name).
	{id: ruleOpenAI, re: regexp.MustCompile(`\bsk-[A-Za-z0-9_\-]{20,}`), groups: []int{0}, check: mixed},
}

// privateKeyBlock matches a PEM private key (PGP's too), or its start when
// the end was cut off. It runs on the whole text, before the line rules.
var privateKeyBlock = regexp.MustCompile(`-----BEGIN ([A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?)-----(?s:.*?)(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)`)

// String returns s with the secrets it recognises by context or by shape
// replaced by [Mask] (see the package documentation for the list). Ordinary
// words are left alone: "monkey=banana", "tokenizer", "token_count=5",
// "bypass=true" and "token_type=bearer expires_in=3600" pass unchanged.
// When nothing is masked, String returns s itself.
//
// String holds no state and is safe for concurrent use. To mask values
// known to be secret, whatever the text around them, use a [Set].
func String(s string) string {
	if strings.Contains(s, "-----BEGIN ") {
		s = privateKeyBlock.ReplaceAllStringFunc(s, maskPrivateKey)
	}
	return maskLines(s)
}

// maskPrivateKey keeps the armour of one PEM block and masks its body,
// writing the line breaks as the block did: "\n" escaped inside a JSON
// string (a GCP service-account key), CRLF or LF.
func maskPrivateKey(block string) string {
	kind := privateKeyBlock.FindStringSubmatch(block)[1]
	rest := block[len("-----BEGIN ")+len(kind)+len("-----"):]
	nl := "\n"
	switch {
	case strings.HasPrefix(rest, `\n`):
		nl = `\n`
	case strings.HasPrefix(rest, "\r\n"):
		nl = "\r\n"
	}
	return "-----BEGIN " + kind + "-----" + nl + Mask + nl + "-----END " + kind + "-----"
}

// maskLines masks each line that holds a trigger with the rules its
// triggers name, copying the text only when a line changes.
func maskLines(s string) string {
	var b strings.Builder
	done := 0 // s[:done] is in b
	x := triggers
	for i := 0; i+1 < len(s); i++ {
		// triggers.maybe by hand: the compiler does not inline it.
		k := pairKey(s[i], s[i+1])
		if x.pairs[k/64]&(1<<(k%64)) == 0 || !x.tri(s, i, k) {
			continue
		}
		rules := x.at(s, i)
		if rules == 0 {
			continue
		}
		start := strings.LastIndexByte(s[:i], '\n') + 1
		end := len(s)
		if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
			end = i + j
		}
		// The rest of the line may name more rules.
		for j := i + 1; j+1 < end; j++ {
			if triggers.maybe(s, j) {
				rules |= triggers.at(s, j)
			}
		}
		line := s[start:end]
		if out := maskLine(line, rules); out != line {
			if b.Len() == 0 {
				b.Grow(len(s))
			}
			b.WriteString(s[done:start])
			b.WriteString(out)
			done = end
		}
		i = end
	}
	if done == 0 {
		return s
	}
	b.WriteString(s[done:])
	return b.String()
}

// maskLine applies maskWords and lineRules to line, each if rules names it.
func maskLine(line string, rules uint32) string {
	if rules&ruleWords != 0 {
		line = maskWords(line)
	}
	for _, r := range lineRules {
		if rules&r.id != 0 && (r.need == 0 || strings.IndexByte(line, r.need) >= 0) {
			line = r.apply(line)
		}
	}
	return line
}

// apply masks r's group in each match of r.re that r.check accepts.
func (r rule) apply(line string) string {
	ms := r.re.FindAllStringSubmatchIndex(line, -1)
	if ms == nil {
		return line
	}
	var b strings.Builder
	done := 0
	for _, m := range ms {
		lo, hi := -1, -1
		for _, g := range r.groups {
			if m[2*g] >= 0 {
				lo, hi = m[2*g], m[2*g+1]
				break
			}
		}
		if lo < 0 || (r.check != nil && !r.check(line, m, line[lo:hi])) {
			continue
		}
		b.WriteString(line[done:lo])
		b.WriteString(Mask)
		done = hi
	}
	if done == 0 {
		return line
	}
	b.WriteString(line[done:])
	return b.String()
}

// ordinary values are never masked: flags, switches, scheme names, and the
// mask itself.
func ordinary(v string) bool {
	switch strings.ToLower(v) {
	case "", Mask, "true", "false", "yes", "no", "on", "off", "none", "null", "nil",
		"required", "optional", "enabled", "disabled", "bearer", "basic", "{", "[", "|", ">":
		return true
	}
	return false
}

// notOrdinary accepts a value that is not ordinary.
func notOrdinary(_ string, _ []int, v string) bool { return !ordinary(v) }

// schemeCredential accepts "Bearer X" and "Basic X" when X looks like a
// credential: "token_type=bearer expires_in=3600" is a NAME=value after the
// word, and "Basic authentication" is prose.
func schemeCredential(line string, m []int, v string) bool {
	if m[1] < len(line) && isTokenByte(line[m[1]]) {
		return false // the run goes on: bearer expires_in=3600
	}
	return looksRandom(strings.TrimRight(v, "="))
}

// headerCredential accepts the credential of an Authorization header unless
// it is only a scheme name with nothing after it ("Authorization: Bearer").
func headerCredential(_ string, m []int, cred string) bool {
	if m[2] < 0 {
		switch strings.ToLower(cred) {
		case "bearer", "basic", "digest", "token", "negotiate", "ntlm", "hoba", "mutual":
			return false
		}
	}
	return !ordinary(cred)
}

// endsRun accepts a match not followed by more base64.
func endsRun(line string, m []int, _ string) bool {
	e := m[1]
	return e == len(line) || !(isAlnum(line[e]) || line[e] == '/' || line[e] == '+' || line[e] == '=')
}

// mixed accepts a value with upper case, lower case and digits.
func mixed(_ string, _ []int, v string) bool {
	var up, lo, dig bool
	for _, c := range []byte(v) {
		up = up || 'A' <= c && c <= 'Z'
		lo = lo || 'a' <= c && c <= 'z'
		dig = dig || '0' <= c && c <= '9'
	}
	return up && lo && dig
}

// looksRandom reports whether tok, 8 bytes or more, has a digit, or an upper
// case letter after its first byte next to lower case ones: base64 and
// JWTs do, English words do not.
func looksRandom(tok string) bool {
	if len(tok) < 8 {
		return false
	}
	var innerUp, lo bool
	for i, c := range []byte(tok) {
		switch {
		case '0' <= c && c <= '9':
			return true
		case 'A' <= c && c <= 'Z':
			innerUp = innerUp || i > 0
		case 'a' <= c && c <= 'z':
			lo = true
		}
	}
	return innerUp && lo
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func isTokenByte(c byte) bool {
	return isAlnum(c) || strings.IndexByte("._~+/-=", c) >= 0
}
