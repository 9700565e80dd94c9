package main

import "syscall"

// tunnelProcAttr puts cloudflared in its own process group, so that
// stopping it stops what it started, and has it die with the gateway even
// if the gateway is killed.
func tunnelProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
