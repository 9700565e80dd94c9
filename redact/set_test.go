package redact_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/rigout/rigout/redact"
)

// gatewayToken is a fake of the gateway's own bearer token.
const gatewayToken = "rgt_Zq81xPw0bLmN4vTy"

func TestSetRedact(t *testing.T) {
	const odd = "p@ss w/rd&x=\"1\"<y>" // needs escaping in URLs and JSON
	set, err := redact.New(gatewayToken, odd)
	if err != nil {
		t.Fatal(err)
	}
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	b64u := func(s string) string { return base64.URLEncoding.EncodeToString([]byte(s)) }
	raw := func(s string) string { return base64.RawStdEncoding.EncodeToString([]byte(s)) }
	tests := []struct {
		name, in, want string
	}{
		{"plain text", "hello world", "hello world"},
		{"raw", "token is " + gatewayToken + ".", "token is ***."},
		{"inside a word", "x" + gatewayToken + "y", "x***y"},
		{"twice", gatewayToken + gatewayToken + " " + gatewayToken, "*** ***"},
		{"renamed variable", "RIGOUT_X=" + gatewayToken, "RIGOUT_X=***"},
		{"base64", "echo " + b64(gatewayToken), "echo ***"},
		{"base64 url", b64u(odd), "***"},
		{"base64 raw", raw(gatewayToken) + " end", "*** end"},
		{"hex", hex.EncodeToString([]byte(gatewayToken)), "***"},
		{"hex upper", strings.ToUpper(hex.EncodeToString([]byte(gatewayToken))), "***"},
		{"query escape", "?p=" + url.QueryEscape(odd), "?p=***"},
		{"path escape", "/u/" + url.PathEscape(odd) + "/x", "/u/***/x"},
		{"lower percent", "?p=" + strings.ToLower(url.QueryEscape(odd)), "?p=***"},
		{"json", `{"v":"p@ss w/rd&x=\"1\"<y>"}`, `{"v":"***"}`},
		{"json html", `{"v":"p@ss w/rd\u0026x=\"1\"\u003cy\u003e"}`, `{"v":"***"}`},
		{"patterns too", "password=hunter22 " + gatewayToken, "password=*** ***"},
		{"near miss", gatewayToken[:len(gatewayToken)-1], gatewayToken[:len(gatewayToken)-1]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := set.Redact(tt.in); got != tt.want {
				t.Errorf("Redact(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestSetBase64Stream checks a secret inside a longer base64 stream at each
// byte alignment, in both alphabets: what is left of the stream must not
// decode to anything that holds the secret.
func TestSetBase64Stream(t *testing.T) {
	set, err := redact.New(gatewayToken)
	if err != nil {
		t.Fatal(err)
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding} {
		for pre := 0; pre < 6; pre++ {
			for post := 0; post < 4; post++ {
				plain := strings.Repeat("\xfa", pre) + gatewayToken + strings.Repeat("\xfb", post)
				in := enc.EncodeToString([]byte(plain))
				out := set.Redact(in)
				if !strings.Contains(out, redact.Mask) {
					t.Errorf("pre %d post %d: %q not masked", pre, post, in)
				}
				for _, part := range strings.Split(out, redact.Mask) {
					// Decode from every offset: no piece may hold 3 bytes of the secret in a row.
					for off := 0; off < len(part); off++ {
						d, _ := enc.WithPadding(base64.NoPadding).DecodeString(strings.TrimRight(part[off:off+(len(part)-off)/4*4], "="))
						for i := 0; i+8 <= len(gatewayToken); i++ {
							if bytes.Contains(d, []byte(gatewayToken[i:i+8])) {
								t.Errorf("pre %d post %d: %q left %q, which decodes to part of the secret", pre, post, in, part)
							}
						}
					}
				}
			}
		}
	}
}

func TestNewShort(t *testing.T) {
	const short = "hunter2"
	_, err := redact.New(gatewayToken, short)
	if !errors.Is(err, redact.ErrShortSecret) {
		t.Fatalf("New with a 7-byte secret: err = %v; want ErrShortSecret", err)
	}
	if strings.Contains(err.Error(), short) {
		t.Errorf("error %q holds the secret", err)
	}
	var set redact.Set
	if err := set.Add(short); !errors.Is(err, redact.ErrShortSecret) {
		t.Errorf("Add(short) = %v; want ErrShortSecret", err)
	}
	if err := set.Add(""); !errors.Is(err, redact.ErrShortSecret) {
		t.Errorf("Add(\"\") = %v; want ErrShortSecret", err)
	}
	if set.Len() != 0 {
		t.Errorf("Len = %d after refused adds", set.Len())
	}
}

func TestZeroAndNilSet(t *testing.T) {
	var zero redact.Set
	var nilSet *redact.Set
	in := "password=hunter22 " + gatewayToken
	want := redact.String(in)
	if got := zero.Redact(in); got != want {
		t.Errorf("zero Set: %q; want %q", got, want)
	}
	if got := nilSet.Redact(in); got != want {
		t.Errorf("nil Set: %q; want %q", got, want)
	}
	if err := zero.Add(gatewayToken); err != nil {
		t.Fatal(err)
	}
	if err := zero.Add(gatewayToken); err != nil || zero.Len() != 1 {
		t.Errorf("second Add: err %v, Len %d; want nil, 1", err, zero.Len())
	}
	if got := zero.Redact(in); got != "password=*** ***" {
		t.Errorf("after Add: %q", got)
	}
}

// TestTwoSets checks that sets share nothing.
func TestTwoSets(t *testing.T) {
	a, _ := redact.New("alpha-secret-1")
	b, _ := redact.New("bravo-secret-2")
	in := "alpha-secret-1 bravo-secret-2"
	if got := a.Redact(in); got != "*** bravo-secret-2" {
		t.Errorf("a: %q", got)
	}
	if got := b.Redact(in); got != "alpha-secret-1 ***" {
		t.Errorf("b: %q", got)
	}
}

// TestSetPrintsNoSecrets prints a Set every way fmt and slog can.
func TestSetPrintsNoSecrets(t *testing.T) {
	set, err := redact.New(gatewayToken)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d"} {
		out = append(out, fmt.Sprintf(verb, set))
	}
	out = append(out, fmt.Sprint(set), fmt.Sprintln(set))
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("m", "set", set)
	slog.New(slog.NewTextHandler(&buf, nil)).Info("m", "set", set)
	out = append(out, buf.String())
	hexed := hex.EncodeToString([]byte(gatewayToken))
	for _, s := range out {
		if strings.Contains(s, gatewayToken) || strings.Contains(strings.ToLower(s), hexed) || strings.Contains(s, "Zq81") {
			t.Errorf("printed the secret: %q", s)
		}
	}
	if got := fmt.Sprint(set); got != "redact.Set(1 secrets)" {
		t.Errorf("Sprint = %q", got)
	}
	if !strings.Contains(buf.String(), `"set":{"secrets":1}`) {
		t.Errorf("slog JSON: %s", buf.String())
	}
}

func TestSetConcurrent(t *testing.T) {
	var set redact.Set
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait)
	for g := range 4 {
		wg.Go(func() {
			for i := range 50 {
				v := fmt.Sprintf("secret-%d-%03d", g, i)
				if err := set.Add(v); err != nil {
					t.Error(err)
					return
				}
				if out := set.Redact("x " + v + " y"); out != "x *** y" {
					t.Errorf("Redact right after Add(%q) = %q", v, out)
					return
				}
			}
		})
	}
	wg.Wait()
	if set.Len() != 200 {
		t.Errorf("Len = %d; want 200", set.Len())
	}
}

func FuzzSet(f *testing.F) {
	f.Add("before ", " after", gatewayToken)
	f.Add("password=", "\n", "p@ss w/rd&x=1")
	f.Add("", "", "********")
	f.Add("***", "**", "a**b***c")
	for _, tt := range redactTests() {
		f.Add(tt.in, tt.want, "secret-value-1")
	}
	f.Fuzz(func(t *testing.T, pre, post, secret string) {
		set, err := redact.New(secret)
		if len(secret) < redact.MinSecretLen {
			if !errors.Is(err, redact.ErrShortSecret) {
				t.Fatalf("New(%d bytes) = %v; want ErrShortSecret", len(secret), err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range []string{
			pre + secret + post,
			pre + base64.StdEncoding.EncodeToString([]byte(secret)) + post,
			pre + hex.EncodeToString([]byte(secret)) + post,
		} {
			out := set.Redact(in)
			if strings.Contains(out, secret) {
				t.Fatalf("Redact(%q) = %q holds the secret %q", in, out, secret)
			}
			if again := set.Redact(out); again != out {
				t.Fatalf("Redact is not idempotent on %q:\n once %q\ntwice %q", in, out, again)
			}
		}
	})
}
