package redact_test

import (
	"strings"
	"testing"

	"github.com/rigout/rigout/redact"
)

// fake returns n deterministic pseudo-random characters from alphabet, so
// the tests carry token shapes, never real tokens.
func fake(alphabet string, n int, seed uint32) string {
	b := make([]byte, n)
	for i := range b {
		seed = seed*1664525 + 1013904223
		b[i] = alphabet[int(seed>>16)%len(alphabet)]
	}
	return string(b)
}

const (
	alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	upnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0234567"
	b64   = alnum + "+/"
	b64u  = alnum + "-_"
	hexlo = "0123456789abcdef"
	bech  = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"
)

type redactTest struct {
	name, in, want string
}

// redactTests is the table for TestString; it also seeds FuzzString.
func redactTests() []redactTest {
	awsID := "AKIA" + fake(upnum, 16, 1)
	awsSecret := fake(b64, 40, 2)
	jwt := "eyJhbGciOiJIUzI1NiJ9.eyJ" + fake(b64u, 40, 3) + "." + fake(b64u, 43, 4)
	return []redactTest{
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
		{"quoted", `password="two words"`, `password="***"`},
		{"single quoted", `secret='a b'`, `secret='***'`},
		{"quoted then text", `password="two words"x=1`, `password="***"x=1`},
		{"empty quoted", `password=""`, `password=""`},
		{"json", `{"password": "hunter2", "user": "bob"}`, `{"password": "***", "user": "bob"}`},
		{"json token", `{"access_token":"abc","expires":3600}`, `{"access_token":"***","expires":3600}`},
		{"json token type", `{"access_token":"abc","token_type":"bearer","expires_in":3600}`, `{"access_token":"***","token_type":"bearer","expires_in":3600}`},
		{"json auth", `{"auths":{"r.io":{"auth":"dXNlcjpwYXNz"}}}`, `{"auths":{"r.io":{"auth":"***"}}}`},
		{"json pass", `{"pass": "hunter22"}`, `{"pass": "***"}`},
		{"json authorization", `{"Authorization": "token abc"}`, `{"Authorization": "***"}`},
		{"json escaped quote", `{"secret": "a\"b", "n": 1}`, `{"secret": "***", "n": 1}`},

		// Names: whole segments only.
		{"mysql pwd", "MYSQL_PWD=hunter22 mysql -h db", "MYSQL_PWD=*** mysql -h db"},
		{"db pass", "DB_PASS=hunter22", "DB_PASS=***"},
		{"pass", "PASS=hunter22", "PASS=***"},
		{"pass lower", "pass=hunter22", "pass=***"},
		{"pgpassword", "PGPASSWORD=hunter22 psql", "PGPASSWORD=*** psql"},
		{"passwd suffix", "REDIS_PASSWD=x9", "REDIS_PASSWD=***"},
		{"dotted pass", "sasl.pass: x9", "sasl.pass: ***"},
		{"db pw", "DB_PW=x9", "DB_PW=***"},
		{"aws secret", "AWS_SECRET_ACCESS_KEY=" + awsSecret, "AWS_SECRET_ACCESS_KEY=***"},
		{"aws session", "AWS_SESSION_TOKEN=FwoGZXIvYXdzE", "AWS_SESSION_TOKEN=***"},
		{"api key env", "OPENAI_API_KEY=abc123", "OPENAI_API_KEY=***"},
		{"secret key", "SECRET_KEY=django-insecure-x", "SECRET_KEY=***"},
		{"npm auth", "NPM_AUTH=abc123", "NPM_AUTH=***"},
		{"npmrc auth", "_auth=dXNlcjpwYXNz", "_auth=***"},
		{"npmrc token", "//registry.npmjs.org/:_authToken=abc123", "//registry.npmjs.org/:_authToken=***"},
		{"credentials", "DOCKER_CREDENTIALS=abc123", "DOCKER_CREDENTIALS=***"},
		{"credentials path", "GOOGLE_APPLICATION_CREDENTIALS=/etc/gcp/key.json", "GOOGLE_APPLICATION_CREDENTIALS=/etc/gcp/key.json"},
		{"azure account key", "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + fake(b64, 86, 5) + "==;EndpointSuffix=core.windows.net",
			"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=***;EndpointSuffix=core.windows.net"},
		{"azure sas", "https://acct.blob.core.windows.net/c?sv=2022-11-02&sig=abc%2Fdef", "https://acct.blob.core.windows.net/c?sv=2022-11-02&sig=***"},
		{"service bus", "Endpoint=sb://x.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=abc123=", "Endpoint=sb://x.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=***"},
		{"odbc pwd", "Server=db;Uid=sa;Pwd=hunter22;", "Server=db;Uid=sa;Pwd=***;"},
		{"database url", "DATABASE_URL=postgres://app:hunter22@db:5432/app", "DATABASE_URL=postgres://app:***@db:5432/app"},
		{"bypass", "bypass=true", "bypass=true"},
		{"bypass value", "bypass=hunter22", "bypass=hunter22"},
		{"passport", "passport=X1234567", "passport=X1234567"},
		{"compass", "compass=north", "compass=north"},
		{"pwd", "PWD=/home/bob", "PWD=/home/bob"},
		{"oldpwd", "OLDPWD=/tmp", "OLDPWD=/tmp"},
		{"go test pass", "--- PASS: TestFoo (0.00s)", "--- PASS: TestFoo (0.00s)"},
		{"pass count", "PASS: 12 FAIL: 0", "PASS: 12 FAIL: 0"},
		{"auth true", "auth=true", "auth=true"},
		{"author", "author=alice", "author=alice"},
		{"oauth", "GITHUB_OAUTH=x9y8", "GITHUB_OAUTH=***"},
		{"token type", "token_type=bearer expires_in=3600", "token_type=bearer expires_in=3600"},
		{"tokens", "max_tokens=100 tokens=5", "max_tokens=100 tokens=5"},
		{"secretary", "secretary=alice", "secretary=alice"},
		{"secret name", "secretName: db-creds", "secretName: db-creds"},
		{"token file", "TOKEN_FILE=/run/secrets/t", "TOKEN_FILE=/run/secrets/t"},
		{"yaml block", "password: |", "password: |"},
		{"newline after colon", "secret:\nuser=bob", "secret:\nuser=bob"},
		{"netrc", "machine example.com login bob password hunter22", "machine example.com login bob password ***"},

		// Schemes and headers.
		{"bearer", "Authorization: Bearer eyJhbGciOi.abc.def", "Authorization: Bearer ***"},
		{"bearer lower", "authorization: bearer abc123", "authorization: bearer ***"},
		{"basic", "Authorization: Basic dXNlcjpwYXNz", "Authorization: Basic ***"},
		{"bare bearer", "sent Bearer " + jwt + " upstream", "sent Bearer *** upstream"},
		{"bearer prose", "Bearer tokens and Basic authentication are supported", "Bearer tokens and Basic authentication are supported"},
		{"bearer nothing", "Authorization: Bearer", "Authorization: Bearer"},
		{"bearer nothing newline", "Authorization: Bearer\nHost: example.com", "Authorization: Bearer\nHost: example.com"},
		{"auth token scheme", "Authorization: token ghp_abc", "Authorization: token ***"},
		{"proxy auth", "Proxy-Authorization: Digest abc", "Proxy-Authorization: Digest ***"},
		{"curl header", `curl -H "Authorization: Bearer abc.def" https://x`, `curl -H "Authorization: Bearer ***" https://x`},

		// Flags.
		{"flag", "mysql --password hunter2 -h db", "mysql --password *** -h db"},
		{"flag token", "gh auth login --with-token abc123", "gh auth login --with-token ***"},
		{"flag equals", "app --api-key=abc123", "app --api-key=***"},
		{"flag no value", "app --token --verbose", "app --token --verbose"},
		{"flag pass", "app --db-pass hunter22", "app --db-pass ***"},
		{"openssl passin", "openssl rsa -in k.pem -passin pass:hunter22", "openssl rsa -in k.pem -passin ***"},
		{"curl user", "curl -u bob:hunter22 https://x", "curl -u bob:*** https://x"},
		{"curl user glued", "curl -sSf --user=bob:hunter22 https://x", "curl -sSf --user=bob:*** https://x"},
		{"docker user", "docker run -u 1000:1000 img", "docker run -u 1000:1000 img"},
		{"mysql p", "mysql -h db -phunter22 app", "mysql -h db -p*** app"},
		{"mysql port", "mysql -h db -P 3306 app", "mysql -h db -P 3306 app"},
		{"sshpass", "sshpass -p hunter22 ssh host", "sshpass -p *** ssh host"},
		{"ssh port", "ssh -p 2222 host", "ssh -p 2222 host"},

		// URLs.
		{"url password", "postgres://app:s3cret@db:5432/app", "postgres://app:***@db:5432/app"},
		{"url no password", "https://example.com/path?q=1", "https://example.com/path?q=1"},
		{"url port", "https://example.com:8443/x?a=b@c", "https://example.com:8443/x?a=b@c"},
		{"url user only", "ssh://git@github.com/x.git", "ssh://git@github.com/x.git"},
		{"url empty user", "redis://:hunter22@cache:6379/0", "redis://:***@cache:6379/0"},
		{"url at in password", "amqp://u:p@ss@mq/vh", "amqp://u:***@mq/vh"},
		{"mysql dsn", "dsn=app:hunter22@tcp(db:3306)/app", "dsn=app:***@tcp(db:3306)/app"},

		// PEM.
		{"pem", "-----BEGIN RSA PRIVATE KEY-----\nMIIE\nabc\n-----END RSA PRIVATE KEY-----\nafter",
			"-----BEGIN RSA PRIVATE KEY-----\n***\n-----END RSA PRIVATE KEY-----\nafter"},
		{"pem cut off", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn", "-----BEGIN OPENSSH PRIVATE KEY-----\n***\n-----END OPENSSH PRIVATE KEY-----"},
		{"openssh", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n",
			"-----BEGIN OPENSSH PRIVATE KEY-----\n***\n-----END OPENSSH PRIVATE KEY-----\n"},
		{"pem crlf", "-----BEGIN EC PRIVATE KEY-----\r\nMHcC\r\n-----END EC PRIVATE KEY-----", "-----BEGIN EC PRIVATE KEY-----\r\n***\r\n-----END EC PRIVATE KEY-----"},
		{"pgp", "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF\n-----END PGP PRIVATE KEY BLOCK-----",
			"-----BEGIN PGP PRIVATE KEY BLOCK-----\n***\n-----END PGP PRIVATE KEY BLOCK-----"},
		{"gcp service account", `{"type": "service_account", "private_key_id": "abc", "private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQ\n-----END PRIVATE KEY-----\n", "client_email": "x@p.iam.gserviceaccount.com"}`,
			`{"type": "service_account", "private_key_id": "abc", "private_key": "***", "client_email": "x@p.iam.gserviceaccount.com"}`},
		{"public key", "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----", "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----"},

		// Shapes, each with a near miss.
		{"aws key", awsID, "***"},
		{"aws session key", "ASIA" + fake(upnum, 16, 6), "***"},
		{"aws key short", "AKIA" + fake(upnum, 10, 7), "AKIA" + fake(upnum, 10, 7)},
		{"aws key lower", strings.ToLower(awsID), strings.ToLower(awsID)},
		{"aws pair", awsID + "," + awsSecret + "\n", "***,***\n"},
		{"aws pair spaced", "aws_access_key_id " + awsID + "  " + awsSecret, "aws_access_key_id ***  ***"},
		{"aws 40 alone", "sha " + awsSecret, "sha " + awsSecret},
		{"aws pair 41", awsID + " " + awsSecret + "x", "*** " + awsSecret + "x"},
		{"github token", "ghp_" + fake(alnum, 36, 8), "***"},
		{"github oauth", "x gho_" + fake(alnum, 36, 9) + " y", "x *** y"},
		{"github pat", "github_pat_" + fake(alnum, 22, 10) + "_" + fake(alnum, 59, 11), "***"},
		{"github short", "ghp_abc", "ghp_abc"},
		{"gitlab", "glpat-" + fake(alnum, 20, 12), "***"},
		{"gitlab short", "glpat-abc", "glpat-abc"},
		{"slack token", "xoxb-1234567890-abcdef", "***"},
		{"slack app", "xapp-1-A0" + fake(alnum, 20, 13), "***"},
		{"slack webhook", "https://hooks.slack.com/services/T000/B000/" + fake(alnum, 24, 14), "https://***"},
		{"slack near", "xoxo-hugs", "xoxo-hugs"},
		{"stripe", "sk_live_" + fake(alnum, 24, 15), "***"},
		{"stripe restricted", "rk_live_" + fake(alnum, 24, 16), "***"},
		{"stripe publishable", "pk_live_" + fake(alnum, 24, 17), "pk_live_" + fake(alnum, 24, 17)},
		{"openai", "sk-" + fake(alnum, 48, 18), "***"},
		{"openai project", "sk-proj-" + fake(b64u, 64, 19), "***"},
		{"anthropic", "sk-ant-api03-" + fake(b64u, 93, 20) + "AA", "***"},
		{"sk host name", "sk-prod-cluster-eu-west-1-abc", "sk-prod-cluster-eu-west-1-abc"},
		{"google api key", "AIza" + fake(b64u, 35, 21), "***"},
		{"google near", "AIzaShort", "AIzaShort"},
		{"google oauth", "GOCSPX-" + fake(b64u, 28, 22), "***"},
		{"jwt", "id " + jwt, "id ***"},
		{"jwt near", "eyJhbGciOi only", "eyJhbGciOi only"},
		{"npm", "npm_" + fake(alnum, 36, 23), "***"},
		{"npm near", "npm_config_cache", "npm_config_cache"},
		{"pypi", "pypi-AgEIcHlwaS5vcmc" + fake(b64u, 60, 24), "***"},
		{"pypi near", "pypi-simple", "pypi-simple"},
		{"twilio key", "SK" + fake(hexlo, 32, 25), "***"},
		{"twilio near", "SKIP" + fake(hexlo, 30, 26), "SKIP" + fake(hexlo, 30, 26)},
		{"sendgrid", "SG." + fake(b64u, 22, 27) + "." + fake(b64u, 43, 28), "***"},
		{"sendgrid near", "SG.example", "SG.example"},
		{"age", "AGE-SECRET-KEY-1" + fake(bech, 58, 29), "***"},
		{"age near", "AGE-SECRET-KEY-1SHORT", "AGE-SECRET-KEY-1SHORT"},
		{"age public", "age1" + strings.ToLower(fake(bech, 58, 30)), "age1" + strings.ToLower(fake(bech, 58, 30))},
		{"hugging face", "hf_" + fake(alnum, 34, 31), "***"},
		{"digitalocean", "dop_v1_" + fake(hexlo, 64, 32), "***"},
		{"shopify", "shpat_" + fake(hexlo, 32, 33), "***"},

		// The scanner's edges.
		{"unclosed quote", `password="hunter22 cut off`, `password="***`},
		{"go struct", "{User:bob Password:hunter22 Port:5432}", "{User:bob Password:*** Port:5432}"},
		{"yaml quoted key", "'db_password': 'hunter22'", "'db_password': '***'"},
		{"quoted name equals", `"PASS"="hunter22"`, `"PASS"="***"`},
		{"nested in url", "callback=https://app/cb?access_token=abc123&state=1", "callback=https://app/cb?access_token=***&state=1"},
		{"after value", "a=password=hunter22", "a=password=***"},
		{"flag at line start", "--password hunter22", "--password ***"},
		{"flag tab", "cmd\t--token\tabc123", "cmd\t--token\t***"},
		{"json null", `{"password": null, "token": ""}`, `{"password": null, "token": ""}`},
		{"json number", `{"pin_code": 1, "passcode": 123456}`, `{"pin_code": 1, "passcode": ***}`},
		{"x auth token header", "X-Auth-Token: abc123", "X-Auth-Token: ***"},
		{"colon separator spaces", "secret :  hunter22", "secret :  ***"},
		{"crlf", "password=hunter22\r\nnext=1\r\n", "password=***\r\nnext=1\r\n"},
		{"mask then quote", `password="a"secret="b"`, `password="***"secret="***"`},
		{"multi line", "user=bob\npassword=x\nhost=h", "user=bob\npassword=***\nhost=h"},
		{"time", "12:30:45 started", "12:30:45 started"},
		{"password word", "enter your password below", "enter your password below"},
	}
}

func TestString(t *testing.T) {
	for _, tt := range redactTests() {
		t.Run(tt.name, func(t *testing.T) {
			if got := redact.String(tt.in); got != tt.want {
				t.Errorf("String(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestStringNoCopy checks that text with no trigger costs no allocation,
// and that text with triggers but nothing to mask comes back as is.
func TestStringNoCopy(t *testing.T) {
	plain := strings.Repeat("2026-12-01 12:00:00 INFO worker: processed 12 items, status=ok\n", 100)
	if allocs := testing.AllocsPerRun(10, func() { redact.String(plain) }); allocs != 0 {
		t.Errorf("String made %v allocations on text with no trigger", allocs)
	}
	s := strings.Repeat("token_count=5 monkey=banana https://example.com/x\n", 100)
	if got := redact.String(s); got != s {
		t.Fatalf("String changed text with no secrets")
	}
}

func FuzzString(f *testing.F) {
	for _, tt := range redactTests() {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		once := redact.String(s)
		if twice := redact.String(once); twice != once {
			t.Fatalf("String is not idempotent on %q:\n once %q\ntwice %q", s, once, twice)
		}
		// A labelled secret is masked whatever comes before it.
		const secret = "hunter2hunter2"
		if out := redact.String(s + "\nPASSWORD=" + secret + "\n"); strings.Contains(out, secret) {
			t.Fatalf("labelled secret kept after %q: %q", s, out)
		}
	})
}
