package redact

import "strings"

// A trigger is a literal that every match of some line rule contains. A
// line with none of them cannot hold a secret the rules would find.
type trigger struct {
	lit  string
	fold bool // ASCII case-insensitive
}

// triggerList covers every line rule: the secret words (pass covers
// password, passwd, sshpass; pw covers pwd; auth covers oauth and
// authorization; cred covers credentials; sig covers signature), the
// header schemes, the commands with secret flags, URL and DSN credentials,
// and the token prefixes, which are case-sensitive.
var triggerList = []trigger{
	{"pass", true}, {"pw", true}, {"secret", true}, {"token", true}, {"cred", true},
	{"sig", true}, {"key", true}, {"auth", true}, {"bearer", true}, {"basic", true},
	{"curl", false}, {"mysql", false}, {"mariadb", false}, {"://", false},
	{"@tcp(", false}, {"@unix(", false},
	{"AKIA", false}, {"ASIA", false}, {"ABIA", false}, {"ACCA", false},
	{"ghp_", false}, {"gho_", false}, {"ghu_", false}, {"ghs_", false}, {"ghr_", false},
	{"github_pat_", false}, {"glpat-", false}, {"gldt-", false}, {"glrt-", false}, {"glptt-", false},
	{"xox", false}, {"xapp-", false}, {"hooks.slack.com", false},
	{"sk_live_", false}, {"sk_test_", false}, {"rk_live_", false}, {"rk_test_", false},
	{"whsec_", false}, {"sk-", false}, {"AIza", false}, {"GOCSPX-", false}, {"ya29.", false},
	{"eyJ", false}, {"npm_", false}, {"pypi-Ag", false}, {"SK", false}, {"SG.", false},
	{"AGE-SECRET-KEY-1", false}, {"hf_", false}, {"dop_v1_", false},
	{"shpat_", false}, {"shpss_", false}, {"shpca_", false}, {"shppa_", false},
}

// triggers is built once from triggerList and never modified.
var triggers = newTriggerIndex(triggerList)

// triggerIndex finds triggers with one look at each byte pair: a bit set
// of the case-folded first two bytes of every trigger (8 KiB, it stays in
// L1 cache) rejects almost every position, and only the rare hits compare
// literals. One pass costs about the same whatever the number of triggers,
// where strings.Index would scan the text once per trigger.
type triggerIndex struct {
	pairs  [1 << 16 / 64]uint64
	byPair map[uint16][]trigger
}

func newTriggerIndex(list []trigger) *triggerIndex {
	x := &triggerIndex{byPair: make(map[uint16][]trigger)}
	for _, t := range list {
		k := pairKey(t.lit[0], t.lit[1])
		x.pairs[k/64] |= 1 << (k % 64)
		x.byPair[k] = append(x.byPair[k], t)
	}
	return x
}

// at reports whether a trigger starts at s[i]; i+1 < len(s).
func (x *triggerIndex) at(s string, i int) bool {
	k := pairKey(s[i], s[i+1])
	if x.pairs[k/64]&(1<<(k%64)) == 0 {
		return false
	}
	for _, t := range x.byPair[k] {
		if len(s)-i < len(t.lit) {
			continue
		}
		if w := s[i : i+len(t.lit)]; w == t.lit || t.fold && strings.EqualFold(w, t.lit) {
			return true
		}
	}
	return false
}

func pairKey(a, b byte) uint16 { return uint16(lower(a))<<8 | uint16(lower(b)) }

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
