package redact_test

import (
	"strings"
	"testing"

	"github.com/rigout/rigout/redact"
)

func TestRedact(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"plain", "hello world", "hello world"},
		{"monkey", "monkey=banana", "monkey=banana"},
		{"tokenizer", "loading tokenizer from disk", "loading tokenizer from disk"},
		{"token count", "token_count=5", "token_count=5"},
		{"keyboard", "keyboard=us key=value", "keyboard=us key=value"},
		{"password", "password=hunter2", "password=***"},
		{"password colon", "password: hunter2", "password: ***"},
		{"env var", "DB_PASSWORD=hunter2 other=1", "DB_PASSWORD=*** other=1"},
		{"passwd", "passwd=x1", "passwd=***"},
		{"token", "token=abc123", "token=***"},
		{"access token", "ACCESS_TOKEN=abc.def", "ACCESS_TOKEN=***"},
		{"secret", "secret=s3cr3t", "secret=***"},
		{"client secret", "client_secret: zzz", "client_secret: ***"},
		{"api key", "api_key=AKxyz", "api_key=***"},
		{"api-key", "x-api-key: 12345", "x-api-key: ***"},
		{"apikey", "APIKEY=12345", "APIKEY=***"},
		{"quoted", `password="two words"`, `password=***`},
		{"single quoted", `secret='a b'`, `secret=***`},
		{"json", `{"password": "hunter2", "user": "bob"}`, `{"password": "***", "user": "bob"}`},
		{"json token", `{"access_token":"abc","expires":3600}`, `{"access_token":"***","expires":3600}`},
		{"bearer", "Authorization: Bearer eyJhbGciOi.abc.def", "Authorization: Bearer ***"},
		{"bearer lower", "authorization: bearer abc123", "authorization: bearer ***"},
		{"basic", "Authorization: Basic dXNlcjpwYXNz", "Authorization: Basic ***"},
		{"url password", "postgres://app:s3cret@db:5432/app", "postgres://app:***@db:5432/app"},
		{"url no password", "https://example.com/path?q=1", "https://example.com/path?q=1"},
		{"url user only", "ssh://git@github.com/x.git", "ssh://git@github.com/x.git"},
		{"github token", "ghp_" + strings.Repeat("a", 36), "***"},
		{"aws key", "AKIAABCDEFGHIJKLMNOP", "***"},
		{"slack token", "xoxb-1234567890-abcdef", "***"},
		{"pem", "-----BEGIN RSA PRIVATE KEY-----\nMIIE\nabc\n-----END RSA PRIVATE KEY-----\nafter",
			"-----BEGIN RSA PRIVATE KEY-----\n***\n-----END RSA PRIVATE KEY-----\nafter"},
		{"pem cut off", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn", "-----BEGIN OPENSSH PRIVATE KEY-----\n***\n-----END OPENSSH PRIVATE KEY-----"},
		{"public key", "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----", "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----"},
		{"multi line", "user=bob\npassword=x\nhost=h", "user=bob\npassword=***\nhost=h"},
		{"time", "12:30:45 started", "12:30:45 started"},
		{"secretary", "secretary=alice", "secretary=alice"},
		{"password word", "enter your password below", "enter your password below"},
		{"flag", "mysql --password hunter2 -h db", "mysql --password *** -h db"},
		{"flag token", "gh auth login --with-token abc123", "gh auth login --with-token ***"},
		{"flag equals", "app --api-key=abc123", "app --api-key=***"},
		{"flag no value", "app --token --verbose", "app --token --verbose"},
		{"auth token scheme", "Authorization: token ghp_abc", "Authorization: token ***"},
		{"proxy auth", "Proxy-Authorization: Digest abc", "Proxy-Authorization: Digest ***"},
		{"curl header", `curl -H "Authorization: Bearer abc.def" https://x`, `curl -H "Authorization: Bearer ***" https://x`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := redact.String(tt.in); got != tt.want {
				t.Errorf("String(%q) = %q; want %q", tt.in, got, tt.want)
			}
		})
	}
}

func FuzzString(f *testing.F) {
	for _, s := range []string{"password=x", "Bearer abc", "monkey=banana", "-----BEGIN PRIVATE KEY-----\nx"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		once := redact.String(s)
		if twice := redact.String(once); twice != once {
			t.Fatalf("Redact is not idempotent on %q: %q then %q", s, once, twice)
		}
	})
}
