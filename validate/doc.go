// Package validate decides whether a shell command may run, and removes
// secrets from text before it leaves the gateway.
//
// # Overview
//
// [Redact] masks credentials in command output, file contents and error
// texts. The command policy is built in its own issue.
package validate
