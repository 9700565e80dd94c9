package redact

import "strings"

// A trigger is a literal that every match of some rules contains; a line
// with none of a rule's triggers is not given to it.
type trigger struct {
	lit   string
	fold  bool   // ASCII case-insensitive
	rules uint32 // the rules it names
}

// triggerList covers every rule. The secret words name maskWords: pass
// covers password, passwd, pass; pw covers pwd; auth covers oauth; cred
// covers credentials; sig covers signature; key covers api_key and the
// like. The token prefixes are case-sensitive.
var triggerList = []trigger{
	{"pass", true, ruleWords | ruleNetrc | ruleSSHPass},
	{"pw", true, ruleWords}, {"secret", true, ruleWords}, {"token", true, ruleWords},
	{"cred", true, ruleWords}, {"sig", true, ruleWords}, {"key", true, ruleWords},
	{"auth", true, ruleWords},
	{"authorization", true, ruleHeader},
	{"bearer", true, ruleScheme}, {"basic", true, ruleScheme},
	{"curl", false, ruleCurl}, {"mysql", false, ruleMySQL}, {"mariadb", false, ruleMySQL},
	{"://", false, ruleURL}, {"@tcp(", false, ruleDSN}, {"@unix(", false, ruleDSN},
	{"AKIA", false, ruleAWSPair | ruleTokens}, {"ASIA", false, ruleAWSPair | ruleTokens},
	{"ABIA", false, ruleAWSPair | ruleTokens}, {"ACCA", false, ruleAWSPair | ruleTokens},
	{"ghp_", false, ruleTokens}, {"gho_", false, ruleTokens}, {"ghu_", false, ruleTokens},
	{"ghs_", false, ruleTokens}, {"ghr_", false, ruleTokens}, {"github_pat_", false, ruleTokens},
	{"glpat-", false, ruleTokens}, {"gldt-", false, ruleTokens}, {"glrt-", false, ruleTokens},
	{"glptt-", false, ruleTokens}, {"xox", false, ruleTokens}, {"xapp-", false, ruleTokens},
	{"hooks.slack.com", false, ruleTokens},
	{"sk_live_", false, ruleTokens}, {"sk_test_", false, ruleTokens},
	{"rk_live_", false, ruleTokens}, {"rk_test_", false, ruleTokens},
	{"whsec_", false, ruleTokens}, {"sk-", false, ruleTokens | ruleOpenAI},
	{"AIza", false, ruleTokens}, {"GOCSPX-", false, ruleTokens}, {"ya29.", false, ruleTokens},
	{"eyJ", false, ruleTokens}, {"npm_", false, ruleTokens}, {"pypi-Ag", false, ruleTokens},
	{"SK", false, ruleTokens}, {"SG.", false, ruleTokens}, {"AGE-SECRET-KEY-1", false, ruleTokens},
	{"hf_", false, ruleTokens}, {"dop_v1_", false, ruleTokens},
	{"shpat_", false, ruleTokens}, {"shpss_", false, ruleTokens},
	{"shpca_", false, ruleTokens}, {"shppa_", false, ruleTokens},
}

// triggers is built once from triggerList and never modified.
var triggers = newTriggerIndex(triggerList)

// triggerIndex finds triggers in one pass, whatever their number (where
// strings.Index would scan the text once per trigger). Two bit sets of
// 64 Ki bits (8 KiB each, they stay in L1 cache), one of the case-folded
// first two bytes of the triggers and one of a hash of the first three,
// reject almost every position; only the rare hits compare literals.
type triggerIndex struct {
	pairs [1 << 16 / 64]uint64
	tris  [1 << 16 / 64]uint64
	slot  [1 << 16]uint8 // first two bytes → 1 + index into lists
	lists [][]trigger
}

func newTriggerIndex(list []trigger) *triggerIndex {
	x := new(triggerIndex)
	for _, t := range list {
		k := pairKey(t.lit[0], t.lit[1])
		x.pairs[k/64] |= 1 << (k % 64)
		if len(t.lit) == 2 {
			for c := range 256 {
				h := triHash(k, byte(c))
				x.tris[h/64] |= 1 << (h % 64)
			}
		} else {
			h := triHash(k, fold(t.lit[2]))
			x.tris[h/64] |= 1 << (h % 64)
		}
		if x.slot[k] == 0 {
			x.lists = append(x.lists, nil)
			x.slot[k] = uint8(len(x.lists))
		}
		x.lists[x.slot[k]-1] = append(x.lists[x.slot[k]-1], t)
	}
	return x
}

// maybe is the fast filter: false means no trigger starts at s[i]; i+1 < len(s).
func (x *triggerIndex) maybe(s string, i int) bool {
	k := pairKey(s[i], s[i+1])
	return x.pairs[k/64]&(1<<(k%64)) != 0 && x.tri(s, i, k)
}

// tri tests the third byte after a pair hit.
func (x *triggerIndex) tri(s string, i int, k uint16) bool {
	var c byte
	if i+2 < len(s) {
		c = fold(s[i+2])
	}
	h := triHash(k, c)
	return x.tris[h/64]&(1<<(h%64)) != 0
}

// at returns the rules named by the triggers that start at s[i].
func (x *triggerIndex) at(s string, i int) uint32 {
	n := x.slot[pairKey(s[i], s[i+1])]
	if n == 0 {
		return 0
	}
	var rules uint32
	for _, t := range x.lists[n-1] {
		if len(s)-i < len(t.lit) {
			continue
		}
		if w := s[i : i+len(t.lit)]; w == t.lit || t.fold && strings.EqualFold(w, t.lit) {
			rules |= t.rules
		}
	}
	return rules
}

// pairKey folds two bytes with fold.
func pairKey(a, b byte) uint16 { return uint16(fold(a))<<8 | uint16(fold(b)) }

// fold maps upper-case ASCII letters to lower case with one OR. It maps some
// punctuation onto other punctuation too ('@' to '`'), which only adds
// false hits to the filter: at compares the literals exactly.
func fold(c byte) byte { return c | 0x20 }

// triHash maps a pair key and a third, folded byte to 16 bits.
func triHash(k uint16, c byte) uint32 { return (uint32(k)<<8 | uint32(c)) * 2654435761 >> 16 }

// lower maps upper-case ASCII letters to lower case.
func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
