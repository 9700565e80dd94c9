package rigout

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"
	"time"
)

// Gateways given one ApprovalKey (replicas deriving it from their shared
// chain key) sign alike: a requestState issued by one carries a MAC the
// other verifies, and approval digests agree. Gateways without one, or
// with another, share nothing. A short key is refused at New.
func TestApprovalKeyShared(t *testing.T) {
	chain := bytes.Repeat([]byte{7}, 32)
	shared := DeriveApprovalKey(chain)
	if bytes.Equal(shared, chain) || len(shared) != 32 {
		t.Fatalf("DeriveApprovalKey returned the chain key or %d bytes", len(shared))
	}
	if !bytes.Equal(shared, DeriveApprovalKey(bytes.Clone(chain))) {
		t.Fatal("DeriveApprovalKey is not deterministic")
	}
	newGW := func(key []byte) *Gateway {
		g, err := New(Config{ApprovalKey: key, Approvals: &ApprovalConfig{}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = g.Close() })
		return g
	}
	a, b := newGW(shared), newGW(bytes.Clone(shared))
	other, random := newGW(DeriveApprovalKey(bytes.Repeat([]byte{8}, 32))), newGW(nil)

	now := time.Unix(1_800_000_000, 0)
	digest := [32]byte{1, 2, 3}
	state := a.questions.issue(digest, now)
	macOK := func(g *Gateway) bool {
		parts := strings.Split(state, ".")
		body, _ := base64.RawURLEncoding.DecodeString(parts[1])
		return hex.EncodeToString(g.questions.mac(body, digest)) == parts[2]
	}
	for _, c := range []struct {
		name string
		g    *Gateway
		want bool
	}{{"same key", b, true}, {"other key", other, false}, {"random key", random, false}} {
		if got := macOK(c.g); got != c.want {
			t.Errorf("%s: requestState MAC verifies = %v, want %v", c.name, got, c.want)
		}
		if got := bytes.Equal(c.g.approvals.key, a.approvals.key); got != c.want {
			t.Errorf("%s: approval digest key shared = %v, want %v", c.name, got, c.want)
		}
	}
	if bytes.Equal(a.approvals.key, a.questions.key) {
		t.Error("the digest key and the requestState key are one key")
	}
	if _, err := New(Config{ApprovalKey: make([]byte, 16)}); err == nil || !strings.Contains(err.Error(), "ApprovalKey") {
		t.Errorf("a 16-byte ApprovalKey: %v, want an error naming it", err)
	}
}
