package main

// Why scenario 7 cannot run yet. When their feature lands, replace
// the reason with a Run function in scenarios().
const (
	sshNotYet = "the SSH executor has not landed in the committed tree (execute_command has no working `host`). " +
		"The floors will be OpenSSH with ControlMaster, a fresh `ssh`, and one host, against a loopback sshd " +
		"started with throwaway keys."
)
