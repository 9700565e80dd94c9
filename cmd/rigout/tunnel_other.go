//go:build !linux

package main

import "syscall"

// tunnelProcAttr puts cloudflared in its own process group, so that
// stopping it stops what it started. Without Pdeathsig (Linux only), a
// gateway killed with SIGKILL leaves cloudflared running.
func tunnelProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
