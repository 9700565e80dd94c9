package rigout

import (
	"context"
	"strings"
	"testing"
	"time"
)

// FuzzRedeem: no requestState that this gateway did not issue redeems,
// whatever its bytes, and parsing never panics; an issued one redeems once,
// for its own digest only.
func FuzzRedeem(f *testing.F) {
	q := newQuestions(approvalSubkey(nil, ""), nil)
	now := time.Unix(1_800_000_000, 0)
	digest := [32]byte{1, 2, 3}
	issued := q.issue(digest, now)
	for _, s := range []string{"", "v1", "v1..", "v1.AAAA.00", issued, issued + "0", strings.Replace(issued, "v1", "v2", 1), "v1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA." + strings.Repeat("0", 64)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, state string) {
		q := newQuestions(approvalSubkey(nil, ""), nil) // a fresh key: nothing it did not issue redeems
		if q.redeem(context.Background(), state, digest, now) == nil {
			t.Fatalf("redeemed %q, never issued", state)
		}
		s := q.issue(digest, now)
		if q.redeem(context.Background(), s, [32]byte{9}, now) == nil {
			t.Fatal("redeemed for another digest")
		}
		if q.redeem(context.Background(), s, digest, now.Add(questionTTL+time.Second)) == nil {
			t.Fatal("redeemed after expiry")
		}
		if err := q.redeem(context.Background(), s, digest, now); err != nil {
			t.Fatalf("the issued state does not redeem: %v", err)
		}
		if q.redeem(context.Background(), s, digest, now) == nil {
			t.Fatal("redeemed twice")
		}
	})
}
