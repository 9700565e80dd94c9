package remote_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/rigout/rigout/exec/remote"
)

var hostSpecTests = []struct {
	in      string
	want    remote.HostSpec
	wantErr bool
}{
	{"web1", remote.HostSpec{Host: "web1"}, false},
	{"deploy@web1", remote.HostSpec{User: "deploy", Host: "web1"}, false},
	{"web1:2222", remote.HostSpec{Host: "web1", Port: 2222}, false},
	{"deploy@web1.example.com:22", remote.HostSpec{User: "deploy", Host: "web1.example.com", Port: 22}, false},
	{"10.0.0.5", remote.HostSpec{Host: "10.0.0.5"}, false},
	{"root@10.0.0.5:2200", remote.HostSpec{User: "root", Host: "10.0.0.5", Port: 2200}, false},
	{"[::1]:2222", remote.HostSpec{Host: "::1", Port: 2222}, false},
	{"[fe80::1]", remote.HostSpec{Host: "fe80::1"}, false},
	{"::1", remote.HostSpec{Host: "::1"}, false},
	{"_svc@db_primary", remote.HostSpec{User: "_svc", Host: "db_primary"}, false},
	{"a.b-c_d@h", remote.HostSpec{User: "a.b-c_d", Host: "h"}, false},
	// CVE-2023-51385 class and friends.
	{"-oProxyCommand=id", remote.HostSpec{}, true},
	{"host;id", remote.HostSpec{}, true},
	{"host$(id)", remote.HostSpec{}, true},
	{"host`id`", remote.HostSpec{}, true},
	{"a\nb", remote.HostSpec{}, true},
	{"user;id@host", remote.HostSpec{}, true},
	{"-l@host", remote.HostSpec{}, true},
	{"Root@host", remote.HostSpec{}, true},
	{"1user@host", remote.HostSpec{}, true},
	{"us er@host", remote.HostSpec{}, true},
	{"a@b@c", remote.HostSpec{}, true},
	{"", remote.HostSpec{}, true},
	{"@host", remote.HostSpec{}, true},
	{"user@", remote.HostSpec{}, true},
	{"host:", remote.HostSpec{}, true},
	{"host:0", remote.HostSpec{}, true},
	{"host:65536", remote.HostSpec{}, true},
	{"host:22x", remote.HostSpec{}, true},
	{"host:+22", remote.HostSpec{}, true},
	{"[::1", remote.HostSpec{}, true},
	{"[web1]:22", remote.HostSpec{}, true},
	{"[::1]x", remote.HostSpec{}, true},
	{"[fe80::1%eth0]", remote.HostSpec{}, true},
	{"1::2::3", remote.HostSpec{}, true},
	{"host..com", remote.HostSpec{}, true},
	{".host", remote.HostSpec{}, true},
	{"host.-x", remote.HostSpec{}, true},
	{"h/x", remote.HostSpec{}, true},
	{"h%x", remote.HostSpec{}, true},
	{"h x", remote.HostSpec{}, true},
	{strings.Repeat("a", 64), remote.HostSpec{}, true},
	{strings.Repeat("u", 33) + "@h", remote.HostSpec{}, true},
}

func TestParseHostSpec(t *testing.T) {
	for _, tt := range hostSpecTests {
		got, err := remote.ParseHostSpec(tt.in)
		if tt.wantErr {
			var he *remote.HostSpecError
			if !errors.As(err, &he) {
				t.Errorf("ParseHostSpec(%q) = %+v, %v; want a HostSpecError", tt.in, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseHostSpec(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
			continue
		}
		// String round-trips.
		again, err := remote.ParseHostSpec(got.String())
		if err != nil || again != got {
			t.Errorf("round trip of %q via %q: %+v, %v", tt.in, got.String(), again, err)
		}
	}
}

var proxyJumpTests = []struct {
	in      string
	want    []remote.HostSpec
	wantErr bool
}{
	{"", nil, false},
	{"none", nil, false},
	{"NONE", nil, false},
	{"bastion", []remote.HostSpec{{Host: "bastion"}}, false},
	{"jump@bastion:2222,inner", []remote.HostSpec{{User: "jump", Host: "bastion", Port: 2222}, {Host: "inner"}}, false},
	{"ssh://u@[::1]:22,ssh://h2/", []remote.HostSpec{{User: "u", Host: "::1", Port: 22}, {Host: "h2"}}, false},
	{"a,,b", nil, true},
	{"a,", nil, true},
	{",a", nil, true},
	{"-oProxyCommand=id", nil, true},
	{"a b", nil, true},
	{"a,b;id", nil, true},
	{"a,b,c,d,e,f,g,h,i", nil, true},
}

func TestParseProxyJump(t *testing.T) {
	for _, tt := range proxyJumpTests {
		got, err := remote.ParseProxyJump(tt.in)
		if tt.wantErr {
			if err == nil {
				t.Errorf("ParseProxyJump(%q) = %+v, want an error", tt.in, got)
			}
			continue
		}
		if err != nil || len(got) != len(tt.want) {
			t.Errorf("ParseProxyJump(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("ParseProxyJump(%q)[%d] = %+v, want %+v", tt.in, i, got[i], tt.want[i])
			}
		}
	}
}

// shellMeta are characters a parsed host or user must never carry.
const shellMeta = " \t\n\r;&|<>()$`\\\"'*?[]{}!#~%=,/@"

func checkSpec(t *testing.T, in string, s remote.HostSpec) {
	t.Helper()
	if strings.HasPrefix(s.Host, "-") || strings.HasPrefix(s.User, "-") {
		t.Fatalf("%q: leading '-' in %+v", in, s)
	}
	if s.Host == "" {
		t.Fatalf("%q: empty host", in)
	}
	host := s.Host
	if strings.Contains(host, ":") { // IPv6
		host = strings.ReplaceAll(host, ":", "")
	}
	if strings.ContainsAny(host, shellMeta) || strings.ContainsAny(s.User, shellMeta) {
		t.Fatalf("%q: metacharacter in %+v", in, s)
	}
	if s.Port < 0 || s.Port > 65535 {
		t.Fatalf("%q: port %d", in, s.Port)
	}
	again, err := remote.ParseHostSpec(s.String())
	if err != nil || again != s {
		t.Fatalf("%q: %+v does not round-trip through %q: %+v, %v", in, s, s.String(), again, err)
	}
}

func FuzzHostSpec(f *testing.F) {
	for _, tt := range hostSpecTests {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := remote.ParseHostSpec(in)
		s2, err2 := remote.ParseHostSpec(in)
		if (err == nil) != (err2 == nil) || s != s2 {
			t.Fatalf("%q: not deterministic", in)
		}
		if err != nil {
			var he *remote.HostSpecError
			if !errors.As(err, &he) {
				t.Fatalf("%q: error %T", in, err)
			}
			return
		}
		checkSpec(t, in, s)
	})
}

func FuzzProxyJump(f *testing.F) {
	for _, tt := range proxyJumpTests {
		f.Add(tt.in)
	}
	for _, tt := range hostSpecTests {
		f.Add(tt.in + "," + tt.in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		hops, err := remote.ParseProxyJump(in)
		if err != nil {
			return
		}
		if len(hops) > 8 {
			t.Fatalf("%q: %d hops", in, len(hops))
		}
		for _, h := range hops {
			checkSpec(t, in, h)
		}
	})
}
