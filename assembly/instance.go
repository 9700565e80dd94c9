package assembly

import "os"

// instanceName is this gateway's name among replicas: audit.gateway, or
// the host name. Process and terminal session IDs carry it, so that a
// replica asked about another's ID says whose it is.
func (c *Config) instanceName() string {
	if c.File.Audit.Gateway != "" {
		return c.File.Audit.Gateway
	}
	h, _ := os.Hostname()
	return h
}
