package remote_test

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rigout/rigout/exec/remote"
)

// TestConnectErrNamesDNS: a name that does not resolve is reported as a
// DNS failure, even when the resolver timed out, and a real timeout as
// no answer.
func TestConnectErrNamesDNS(t *testing.T) {
	ctx := context.Background()
	expired, cancel := context.WithTimeout(ctx, time.Nanosecond)
	defer cancel()
	<-expired.Done()
	tests := []struct {
		name    string
		hctx    context.Context
		err     error
		want    string
		notWant string
	}{
		{"no such host", ctx, &net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "web9.invalid", IsNotFound: true}},
			"DNS: no such host web9.invalid", "no answer"},
		{"resolver timed out", expired, &net.DNSError{Err: "i/o timeout", Name: "web9.example", IsTimeout: true},
			"DNS: cannot resolve web9.example (i/o timeout)", "no answer"},
		{"no answer", expired, os.ErrDeadlineExceeded, "no answer within 10s", "DNS"},
		{"refused", ctx, errors.New("connect: connection refused"), "connection refused", "DNS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := remote.ConnectErr(ctx, tt.hctx, tt.err, 10*time.Second, "dial web9").Error()
			if !strings.Contains(got, tt.want) || strings.Contains(got, tt.notWant) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
