package remote

import "log/slog"

// ResolveSSHConfig parses ssh_config text and resolves host against it,
// with no file system or network access: the fuzz target's entry point.
func ResolveSSHConfig(text, host string) (*Endpoint, error) {
	sc, err := parseSSHConfig([]byte(text), "fuzz_config", "/nonexistent/home", slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, err
	}
	inv, err := newInventory(nil, sc, "/nonexistent/home", "me", unsafeOptions{})
	if err != nil {
		return nil, err
	}
	spec, err := ParseHostSpec(host)
	if err != nil {
		return nil, err
	}
	return inv.resolve(spec)
}

// ConnectErr exposes connectErr to the external tests.
var ConnectErr = connectErr
