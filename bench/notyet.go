package main

// Why scenarios 4 and 7 cannot run yet. When their feature lands, replace
// the reason with a Run function in scenarios().
const (
	validatorNotYet = "the command policy (validate.Policy.Check) has not landed: " +
		"the committed validate package holds only Redact. The floor will be parsing the same " +
		"commands with mvdan.cc/sh (what Check does first), so the ratio is the policy walk's cost."
	sshNotYet = "the SSH executor has not landed in the committed tree (execute_command has no working `host`). " +
		"The floors will be OpenSSH with ControlMaster, a fresh `ssh`, and one host, against a loopback sshd " +
		"started with throwaway keys."
)
