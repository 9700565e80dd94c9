// Package redact masks secrets in text on its way out of the gateway:
// command output, file contents, error messages and audit rows.
//
// # Overview
//
// [String] recognises secrets by context and by shape, with no state:
//
//   - NAME=value, NAME: value and "NAME": "value" where NAME ends in a secret
//     word (password, secret, token, api_key, access_key, private_key,
//     credentials, …) or has a whole name segment that is one (DB_PASS,
//     MYSQL_PWD, NPM_AUTH, PASS=); "bypass=true", "passport=x",
//     "monkey=banana" and "token_count=5" are ordinary;
//   - command-line flags (--password VALUE, -passin pass:VALUE, curl -u
//     user:VALUE, mysql -pVALUE, sshpass -p VALUE);
//   - Bearer and Basic credentials that look like credentials, and the value
//     of any Authorization header;
//   - passwords in URLs and Go MySQL DSNs, PEM private key blocks;
//   - well-known token formats: AWS access key IDs (and a bare secret access
//     key written next to one), GitHub, GitLab, Slack, Stripe, OpenAI,
//     Anthropic, Google, JWTs, npm, PyPI, Twilio, SendGrid, Hugging Face,
//     DigitalOcean, Shopify and age secret keys.
//
// Context rules work on one line at a time, and only on lines that hold one
// of a fixed set of trigger words, found in one pass over the text; text
// without them is returned as is, without a copy.
//
// A [Set] adds the values the gateway knows to be secret (its own tokens,
// passphrases, credentials it handed to a command): [Set.Redact] masks every
// occurrence of each, and of its hex, base64 (standard and URL-safe, at any
// byte alignment inside a longer base64 stream), percent-encoded,
// JSON-escaped, reversed and separator-interleaved forms, whatever the
// surrounding text.
//
// # Usage
//
// Text with no known secrets goes through [String]. A gateway that holds
// secrets builds one [Set] with [New], adds to it with [Set.Add] as it learns
// new values, and sends everything it returns through [Set.Redact].
package redact
