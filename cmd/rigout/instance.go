package main

import "os"

// instanceName is this gateway's name among replicas: audit.gateway, or
// the host name. Process and terminal session IDs carry it, so that a
// replica asked about another's ID says whose it is.
func (c *common) instanceName() string {
	if c.file != nil && c.file.Audit.Gateway != "" {
		return c.file.Audit.Gateway
	}
	h, _ := os.Hostname()
	return h
}
