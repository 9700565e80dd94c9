package assembly

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/federation"
	"github.com/rigout/rigout/sandboxcfg"
	"github.com/rigout/rigout/validate"
)

// newSandbox builds the kernel sandbox for local commands, or none when
// the operator asked for none; docker says whether the docker family may
// be served (its sockets stay in sight of who may call it). A kernel without Landlock gives a sandbox that
// enforces nothing, and its status says so.
func (c *Config) newSandbox(policy *validate.Policy, docker bool, logger *slog.Logger) (*exec.Sandbox, error) {
	if c.UnsafeNoSandbox {
		logger.Warn("local commands run without the kernel sandbox (--unsafe-no-sandbox): only the command policy guards them")
		return nil, nil
	}
	cfg, notes := sandboxcfg.Derive(policy, c.StateDir)
	if c.RequireSandbox {
		cfg.RequireABI = 6
	}
	if !c.UnsafeNoViews {
		views := sandboxcfg.Views(policy, c.StateDir, c.workAreas(), c.secretFiles())
		// Critical files inside a work area are read-only in the view
		// itself, not only by Landlock's rules (which a writable tree
		// mounted beneath the private /tmp would inherit past).
		views.ReadOnly = append(views.ReadOnly, cfg.Critical...)
		docker = docker && c.File.Families.Docker
		views.Principal = func(ctx context.Context) exec.Principal { return viewPrincipal(ctx, docker) }
		cfg.Views = views
	}
	cfg.BuildLater = c.SandboxLater
	sb, err := exec.NewSandbox(cfg)
	if err != nil {
		return nil, err
	}
	if len(notes) > 0 {
		// The notes say what Landlock cannot hide; a view hides it. Said
		// once the views' probe is done, off the start-up path.
		go func() {
			if st := sb.Status(); !st.Views {
				for _, n := range notes {
					logger.Warn("sandbox: " + n)
				}
			}
		}()
	}
	go func() { logger.Info("sandbox", "status", sb.Status().String()) }() // after the views' probe
	if !c.SandboxLater {
		startSandbox(sb, logger)
	}
	return sb, nil
}

// NewSandbox builds the kernel sandbox cfg describes, for Config.Sandbox:
// a caller that opens its ledger meanwhile builds it on a goroutine of its
// own. It is nil, without an error, with Config.UnsafeNoSandbox. opts are
// those New will be given: without the docker family, no principal's view
// keeps the docker socket.
func NewSandbox(cfg Config, opts ...Option) (*exec.Sandbox, error) {
	o := options{without: map[string]bool{}}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	c := cfg
	c.setDefaults()
	if c.File == nil {
		return nil, errors.New("assembly: Config.File is nil: give &config.File{} for the defaults")
	}
	policy, err := c.File.CommandPolicy()
	if err != nil {
		return nil, err
	}
	return c.newSandbox(policy, !o.without[Docker], c.Logger)
}

// startSandbox starts building the sandbox's ruleset in the background. A
// failure is logged here, and each local command fails with it until a
// rebuild succeeds. A command that comes first starts the build itself.
func startSandbox(sb *exec.Sandbox, logger *slog.Logger) {
	go func() {
		if err := sb.Ready(); err != nil {
			logger.Error("sandbox: building the ruleset failed: local commands fail until it can be built", "err", err)
		}
	}()
}

// viewPrincipal is who a local command runs for, as its view sees it: a
// stdio downstream server is a principal of its own, "federation:NAME",
// with the work areas (downstream servers are shared by every token);
// else the token of an HTTP call (its name, roots and read-only scope),
// else the stdio client, one full principal. With the docker family on,
// a principal that may call docker_operations keeps the docker socket in
// sight (every other socket under /run is hidden).
func viewPrincipal(ctx context.Context, docker bool) exec.Principal {
	if name, ok := federation.DownstreamFromContext(ctx); ok {
		return exec.Principal{Name: "federation:" + name}
	}
	p, ok := auth.FromContext(ctx)
	if !ok {
		p = auth.Principal{Name: "stdio", Scopes: auth.FullScopes()}
	}
	vp := exec.Principal{Name: p.Name, Roots: p.Scopes.Roots, ReadOnly: p.Scopes.ReadOnly}
	if docker && p.Scopes.AllowTool("docker_operations") && !p.Scopes.ReadOnly {
		vp.Sockets = dockerSockets()
	}
	return vp
}

// dockerSockets are where docker's and podman's engines listen.
func dockerSockets() []string {
	socks := []string{"/run/docker.sock", "/var/run/docker.sock", "/run/podman/podman.sock"}
	if rt := os.Getenv("XDG_RUNTIME_DIR"); rt != "" {
		socks = append(socks, filepath.Join(rt, "docker.sock"), filepath.Join(rt, "podman", "podman.sock"))
	}
	return socks
}

// workAreas are the writable trees of a full principal's view besides the
// home directory and the working directory: --workdir, the configuration's
// work_areas and $RIGOUT_WORK_AREAS (colon-separated).
func (c *Config) workAreas() []string {
	var w []string
	for _, p := range filepath.SplitList(os.Getenv("RIGOUT_WORK_AREAS")) {
		if p != "" {
			w = append(w, p)
		}
	}
	if c.WorkDir != "" {
		w = append(w, c.WorkDir)
	}
	w = append(w, c.File.WorkAreas...)
	return w
}

// secretFiles are files the gateway reads secrets from or must keep from
// commands, which views hide: the configuration file (tokens, client
// secrets), the credential aliases' files, a ledger kept outside the state
// directory with its key, and the ledger's anchor.
func (c *Config) secretFiles() []string {
	var files []string
	if c.ConfigPath != "" {
		if p, err := filepath.Abs(c.ConfigPath); err == nil {
			files = append(files, p)
		}
	}
	if c.AuditDB != "" {
		// A ledger kept outside the state directory, and its key beside it.
		if p, err := filepath.Abs(c.AuditDB); err == nil {
			files = append(files, p, p+".key", p+"-wal", p+"-shm", p+".head")
		}
	}
	for _, spec := range c.File.Credentials {
		if spec.File != "" {
			files = append(files, spec.File)
		}
	}
	if c.File.Audit.AnchorFile != "" {
		files = append(files, c.File.Audit.AnchorFile)
	}
	return files
}

// checkViews fails closed: where per-principal views are unavailable, a
// token confined to roots or to reading would be kept so by the command
// policy alone, so the gateway refuses to start with one unless the
// operator said --unsafe-no-views.
func (c *Config) checkViews(sb *exec.Sandbox, logger *slog.Logger) error {
	if sb == nil || c.UnsafeNoViews {
		if c.UnsafeNoViews && sb != nil {
			logger.Warn("sandbox: --unsafe-no-views: commands of every token share the gateway's view of the machine; a token's roots and read-only scopes are kept by the command policy and Landlock, not by a view of its own")
		}
		return nil
	}
	var narrow []string
	for _, t := range c.File.Tokens {
		if len(t.Scopes.Roots) > 0 || t.Scopes.ReadOnly {
			narrow = append(narrow, t.Name)
		}
	}
	if o := c.File.OAuth; o != nil {
		for _, cl := range o.Clients {
			if len(cl.Scopes.Roots) > 0 || cl.Scopes.ReadOnly {
				narrow = append(narrow, "oauth client "+cl.ID)
			}
		}
		if rs := o.RegistrationScopes; o.AllowRegistration && (len(rs.Roots) > 0 || rs.ReadOnly) {
			narrow = append(narrow, "registration_scopes")
		}
	}
	if len(narrow) == 0 {
		// Nothing to refuse: say it once the views' probe is done, off
		// the start-up path.
		go func() {
			if st := sb.Status(); !st.Views {
				logger.Warn("sandbox: no per-principal views ("+st.ViewsReason+"): every command shares the gateway's view of the machine, guarded by the policy and Landlock", "status", st.String())
			}
		}()
		return nil
	}
	st := sb.Status()
	if st.Views || st.Seatbelt {
		// macOS: each principal's Seatbelt profile holds its roots and
		// read-only scopes (exec.SeatbeltProfile).
		return nil
	}
	return fmt.Errorf("per-principal views are unavailable here (%s), and %s %s confined to roots or to reading: without a view of its own the kernel would not hold that; fix the cause (unprivileged user namespaces, kernel 6.18 for the calls' /proc), or start with --unsafe-no-views to keep them by the policy and Landlock alone",
		st.ViewsReason, strings.Join(narrow, ", "), map[bool]string{true: "is", false: "are"}[len(narrow) == 1])
}
