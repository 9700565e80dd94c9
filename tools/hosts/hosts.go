// Package hosts is the tool family that manages SSH hosts: manage_hosts
// lists, tests, describes, adds, removes and trusts the hosts an
// remote.Router reaches.
//
// # Overview
//
// manage_hosts declares a risk per action: list, test and describe are
// read-only (a read-only token may call them), add, remove and trust
// change what the gateway reaches. Its host argument is declared to the
// chain, so a token may manage only the hosts its scopes name. Trusting a
// host key takes two explicit steps: the first call shows the key's
// fingerprint and records nothing; only a second call that names that
// fingerprint records it, so an agent cannot trust a host on first sight.
//
// [HostKeyRecorder] turns the router's host-key events into audit rows.
//
// # Usage
//
//	hf, err := hosts.New(hosts.Config{Router: router})
//	if err != nil {
//		return err
//	}
//	gw, err := rigout.New(rigout.Config{Tools: hf.Tools()})
package hosts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/exec/remote"
)

// Config configures the family.
type Config struct {
	// Router is the SSH router whose hosts the tool manages. Required. The
	// caller owns it and closes it.
	Router *remote.Router
	// Store, if set, keeps the hosts that add and remove change, so that
	// they outlast this run. Without it they change the router only.
	Store Store
}

// Store keeps configured hosts beyond the router's lifetime, e.g. in a
// file the gateway reads at start. Its methods must be safe for
// concurrent use.
type Store interface {
	// Save records h, replacing a saved host of the same name.
	Save(h remote.HostConfig) error
	// Delete forgets the saved host name; found reports whether there was
	// one (a host from elsewhere, such as the configuration file, is not).
	Delete(name string) (found bool, err error)
	// String names the store in results, e.g. its file.
	String() string
}

// Family is the hosts tool family. It is safe for concurrent use.
type Family struct {
	router *remote.Router
	store  Store
}

// New builds the family.
func New(cfg Config) (*Family, error) {
	if cfg.Router == nil {
		return nil, errors.New("hosts: Config.Router is required")
	}
	return &Family{router: cfg.Router, store: cfg.Store}, nil
}

// Tools returns the family's tools.
func (f *Family) Tools() []rigout.Tool { return []rigout.Tool{f.ManageHosts()} }

// Instructions is the family's part of the initialize instructions.
func (f *Family) Instructions() string {
	return "manage_hosts lists the SSH hosts, tests and describes them."
}

const manageHostsDescription = "SSH hosts: list, test or describe one (route, reachability, the ssh command to paste), " +
	"add or remove one, or trust a host key after checking its fingerprint."

var manageHostsInput = json.RawMessage(`{
  "type": "object",
  "properties": {
    "action": {"type": "string", "enum": ["list", "test", "describe", "add", "remove", "trust"]},
    "host": {"type": "string", "description": "A host as execute_command takes it; add, remove: the alias."},
    "address": {"type": "string", "description": "add: host name or IP to connect to."},
    "user": {"type": "string", "description": "add: remote login."},
    "port": {"type": "integer", "minimum": 1, "maximum": 65535},
    "key": {"type": "string", "description": "add: private key file."},
    "proxy_jump": {"type": "string", "description": "add: jump hosts, as ssh -J takes them."},
    "labels": {"type": "array", "items": {"type": "string"}, "description": "add: labels for fan-out selectors."},
    "fingerprint": {"type": "string", "description": "trust: the SHA256:… fingerprint you verified (without: show the key)."}
  },
  "required": ["action"],
  "additionalProperties": false
}`)

// ManageHosts returns the manage_hosts tool.
func (f *Family) ManageHosts() rigout.Tool {
	return rigout.Tool{
		Name:        "manage_hosts",
		Description: manageHostsDescription,
		InputSchema: manageHostsInput,
		Action:      "action",
		Actions: map[string]rigout.Risk{
			"list":     rigout.ReadOnly,
			"test":     rigout.ReadOnly,
			"describe": rigout.ReadOnly,
			"add":      rigout.Mutating,
			"remove":   rigout.Mutating,
			"trust":    rigout.Mutating,
		},
		Hosts:   []rigout.HostArg{{Name: "host"}},
		Handler: f.manageHosts,
	}
}

type manageHostsArgs struct {
	Action      string   `json:"action"`
	Host        string   `json:"host"`
	Address     string   `json:"address"`
	User        string   `json:"user"`
	Port        int      `json:"port"`
	Key         string   `json:"key"`
	ProxyJump   string   `json:"proxy_jump"`
	Labels      []string `json:"labels"`
	Fingerprint string   `json:"fingerprint"`
}

func (f *Family) manageHosts(ctx context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
	var a manageHostsArgs
	if err := call.Bind(&a); err != nil {
		return nil, err
	}
	if call.Action() != "list" && a.Host == "" {
		call.Outcome.Status = audit.StatusInvalid
		return rigout.ErrorResult("manage_hosts %s needs `host`", call.Action()), nil
	}
	who := call.Principal().Name
	switch call.Action() {
	case "list":
		return rigout.JSONResult(map[string]any{"hosts": f.router.List()})
	case "test":
		t := f.router.Test(ctx, a.Host, who)
		call.Outcome.Route = t.Route
		out := map[string]any{"host": t.Host, "route": t.Route, "reachable": t.Reachable, "latency_ms": t.Latency.Milliseconds()}
		if t.HostKey != "" {
			out["host_key"] = t.HostKey
		}
		if t.Err != nil {
			out["error"] = t.Err.Error()
			// The ledger gets the error itself, not the JSON's first line.
			call.Outcome.Status, call.Outcome.Error = audit.StatusError, t.Err.Error()
		}
		res, err := rigout.JSONResult(out)
		if err == nil && t.Err != nil {
			res.IsError = true
		}
		return res, err
	case "describe":
		d, err := f.router.Describe(ctx, a.Host, who)
		if err != nil {
			return rigout.ErrorResult("describe %s: %v", a.Host, err), nil
		}
		call.Outcome.Route = d.Route
		out := struct {
			remote.Description
			// Latency in milliseconds, as test reports it; the embedded
			// nanoseconds are hidden by the nil field of the same name.
			LatencyMS int64     `json:"latency_ms"`
			Latency   *struct{} `json:"latency,omitempty"`
			Sandbox   string    `json:"sandbox"`
		}{Description: d, LatencyMS: d.Latency.Milliseconds(),
			Sandbox: "none on the far side: commands sent there are checked by the command policy only, not by a kernel sandbox"}
		if d.Local {
			out.Sandbox = "this machine: local commands run in the gateway's sandbox when it has one"
		}
		return rigout.JSONResult(out)
	case "add":
		h := remote.HostConfig{Name: a.Host, Address: a.Address, User: a.User, Port: a.Port, Key: a.Key, ProxyJump: a.ProxyJump, Labels: a.Labels}
		if err := f.router.Add(h); err != nil {
			call.Outcome.Status = audit.StatusInvalid
			return rigout.ErrorResult("add %s: %v", a.Host, err), nil
		}
		if f.store == nil {
			return rigout.TextResult(fmt.Sprintf("added host %s for this run (it is not saved to the configuration file)", a.Host)), nil
		}
		if err := f.store.Save(h); err != nil {
			_ = f.router.Remove(a.Host) // saved or not at all
			call.Outcome.Status = audit.StatusError
			return rigout.ErrorResult("add %s: not saved to %s: %v; the host was not added", a.Host, f.store, err), nil
		}
		return rigout.TextResult(fmt.Sprintf("added host %s and saved it to %s: it outlasts a restart", a.Host, f.store)), nil
	case "remove":
		if err := f.router.Remove(a.Host); err != nil {
			return rigout.ErrorResult("remove %s: %v", a.Host, err), nil
		}
		if f.store == nil {
			return rigout.TextResult("removed host " + a.Host), nil
		}
		found, err := f.store.Delete(a.Host)
		switch {
		case err != nil:
			call.Outcome.Status = audit.StatusError
			return rigout.ErrorResult("removed host %s for this run, but it could not be removed from %s: %v; it comes back at the next start", a.Host, f.store, err), nil
		case !found:
			return rigout.TextResult(fmt.Sprintf("removed host %s for this run; it is not in %s (it comes from the configuration file), so it comes back at the next start", a.Host, f.store)), nil
		}
		return rigout.TextResult(fmt.Sprintf("removed host %s, also from %s", a.Host, f.store)), nil
	case "trust":
		if a.Fingerprint == "" {
			return f.showHostKey(ctx, call, a.Host)
		}
		return f.trustHost(ctx, call, a.Host, a.Fingerprint)
	}
	// The chain refuses actions the tool did not declare.
	return nil, fmt.Errorf("manage_hosts: action %q has no handler", call.Action())
}

// showHostKey is the first step of trust: it reads the host's key and
// records nothing.
func (f *Family) showHostKey(ctx context.Context, call *rigout.Call, host string) (*mcp.CallToolResult, error) {
	res, err := f.router.HostKey(ctx, host)
	call.Outcome.Route = res.Address
	switch {
	case err != nil:
		return rigout.ErrorResult("trust %s: %v", host, err), nil
	case res.AlreadyKnown:
		return rigout.TextResult(fmt.Sprintf("%s's %s key %s is already trusted", host, res.KeyType, res.Fingerprint)), nil
	}
	next := rigout.NextCall{Tool: call.Tool.Name, Why: "records the key, once a person has checked the fingerprint",
		Arguments: map[string]any{"action": "trust", "host": host, "fingerprint": res.Fingerprint}}
	r := rigout.TextResult(fmt.Sprintf("%s (%s) shows a %s key with fingerprint %s. Nothing was recorded.\n"+
		"Check this fingerprint with the host's administrator or on its console (ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub), "+
		"then call manage_hosts again with action trust and fingerprint %s.\n%s",
		host, res.Address, res.KeyType, res.Fingerprint, res.Fingerprint, next.Line()))
	r.StructuredContent = map[string]any{"host": host, "address": res.Address, "key_type": res.KeyType,
		"fingerprint": res.Fingerprint, "recorded": false, "next": next}
	return r, nil
}

// trustHost is the second step: it records the key only if the host shows
// exactly the fingerprint the caller verified.
func (f *Family) trustHost(ctx context.Context, call *rigout.Call, host, fingerprint string) (*mcp.CallToolResult, error) {
	res, err := f.router.Trust(ctx, host, fingerprint)
	call.Outcome.Route = res.Address
	switch {
	case err != nil:
		return rigout.ErrorResult("trust %s: %v", host, err), nil
	case res.AlreadyKnown:
		return rigout.TextResult(fmt.Sprintf("%s's %s key %s was already trusted", host, res.KeyType, res.Fingerprint)), nil
	}
	return rigout.TextResult(fmt.Sprintf("trusted %s (%s): %s %s, recorded in %s", host, res.Address, res.KeyType, res.Fingerprint, res.File)), nil
}

// HostKeyRecorder returns a callback for remote.RouterConfig.OnHostKey that
// records every host key learned, refused or ignored in the audit ledger
// (ssh.hostkey.learned as ok, the others as denied).
func HostKeyRecorder(rec audit.Recorder) func(context.Context, remote.HostKeyEvent) {
	return func(ctx context.Context, ev remote.HostKeyEvent) {
		status := audit.StatusOK
		if ev.Kind != remote.HostKeyLearned {
			status = audit.StatusDenied
		}
		_ = rec.Record(context.WithoutCancel(ctx), audit.Event{
			Type:      audit.EventType(ev.Kind.String()),
			Time:      ev.Time.UTC(),
			Principal: ev.Principal,
			Host:      ev.Host,
			Route:     ev.Address,
			Status:    status,
			Detail:    rigout.DetailJSON(map[audit.DetailKey]string{audit.DetailKeyType: ev.KeyType, audit.DetailFingerprint: ev.Fingerprint, audit.DetailFile: ev.File}),
		})
	}
}
