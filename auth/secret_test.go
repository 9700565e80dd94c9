package auth_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/rigout/rigout/auth"
)

func TestSecretRedacts(t *testing.T) {
	v := newToken(t)
	s := auth.NewSecret(v)
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	log.Info("x", "secret", s, "struct", struct{ S auth.Secret }{s})
	log.Info("y", slog.Any("ptr", &s))
	b, _ := json.Marshal(struct{ S auth.Secret }{s})
	texts := []string{buf.String(), fmt.Sprint(s), fmt.Sprintf("%v %+v %#v %s %q", s, s, s, s, s), fmt.Sprintf("%+v", struct{ S auth.Secret }{s}), string(b)}
	for _, txt := range texts {
		if strings.Contains(txt, v) {
			t.Errorf("secret leaked: %s", strings.ReplaceAll(txt, v, "<SECRET>"))
		}
		if !strings.Contains(txt, "REDACTED") {
			t.Errorf("no redaction marker in %q", txt)
		}
	}
	if s.Reveal() != v || s.Digest() != auth.DigestOf(v) || s.IsZero() || !auth.NewSecret("").IsZero() {
		t.Error("Reveal/Digest/IsZero")
	}
	var back struct{ S auth.Secret }
	if err := json.Unmarshal([]byte(`{"S":"plain"}`), &back); err != nil || back.S.Reveal() != "plain" {
		t.Errorf("unmarshal: %v", err)
	}
	if err := json.Unmarshal(b, &back); err == nil {
		t.Error("a redacted document was accepted as configuration")
	}
}

func TestDigest(t *testing.T) {
	d := auth.DigestOf("abc")
	p, err := auth.ParseDigest(d.String())
	if err != nil || p != d || !p.Equal(d) || p.IsZero() {
		t.Fatalf("%v %v", p, err)
	}
	if p2, err := auth.ParseDigest(strings.TrimPrefix(d.String(), "sha256:")); err != nil || p2 != d {
		t.Error("bare hex")
	}
	for _, bad := range []string{"", "sha256:", "sha256:zz" + strings.Repeat("0", 62), strings.Repeat("0", 63)} {
		if _, err := auth.ParseDigest(bad); err == nil {
			t.Errorf("ParseDigest(%q) accepted", bad)
		}
	}
	if d.String() != "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Errorf("%s", d)
	}
}

func TestGenerateToken(t *testing.T) {
	a, err := auth.GenerateToken(bytes.NewReader(bytes.Repeat([]byte{1}, 64)))
	if err != nil || len(a) != 43 || a != "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE" {
		t.Fatalf("%q %v", a, err)
	}
	if _, ok := auth.ParseBearer([]string{"Bearer " + a}); !ok {
		t.Error("a generated token is not a valid bearer token")
	}
	if _, err := auth.GenerateToken(bytes.NewReader(make([]byte, 31))); err == nil {
		t.Error("short read accepted")
	}
	if _, err := auth.GenerateToken(iotest.ErrReader(errors.New("boom"))); err == nil {
		t.Error("reader error ignored")
	}
	if _, err := auth.GenerateToken(nil); err == nil {
		t.Error("nil reader accepted")
	}
}

func TestWriteFileSecure(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "connection.json")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := auth.WriteFileSecure(p, []byte(`{"token":"x"}`)); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	if b, _ := os.ReadFile(p); string(b) != `{"token":"x"}` {
		t.Errorf("content %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("temporary files left: %v", ents)
	}
	err = auth.WriteFileSecure(filepath.Join(dir, "missing", "f"), nil)
	recordErr(err)
	if err == nil {
		t.Error("write into a missing directory succeeded")
	}
}
