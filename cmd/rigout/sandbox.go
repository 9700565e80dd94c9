package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/federation"
	"github.com/rigout/rigout/sandboxcfg"
	"github.com/rigout/rigout/validate"
)

// sandboxConfig derives the kernel sandbox from the command policy and the
// state directory; see sandboxcfg.Derive.
func sandboxConfig(policy *validate.Policy, stateDir string) (exec.SandboxConfig, []string) {
	return sandboxcfg.Derive(policy, stateDir)
}

// programDir reports whether dir is a system directory of programs or
// libraries; see sandboxcfg.ProgramDir.
func programDir(dir string) bool { return sandboxcfg.ProgramDir(dir) }

// sandbox builds the kernel sandbox for local commands, or none when the
// operator asked for none. A kernel without Landlock gives a sandbox that
// enforces nothing, and its status says so.
func (c *common) sandbox(policy *validate.Policy, logger *slog.Logger) (*exec.Sandbox, error) {
	if c.noSandbox {
		logger.Warn("local commands run without the kernel sandbox (--unsafe-no-sandbox): only the command policy guards them")
		return nil, nil
	}
	cfg, notes := sandboxConfig(policy, c.dir)
	if c.requireSandbox {
		cfg.RequireABI = 6
	}
	if !c.noViews {
		views := sandboxcfg.Views(policy, c.dir, c.workAreas(), c.secretFiles())
		// Critical files inside a work area are read-only in the view
		// itself, not only by Landlock's rules (which a writable tree
		// mounted beneath the private /tmp would inherit past).
		views.ReadOnly = append(views.ReadOnly, cfg.Critical...)
		views.Principal = c.viewPrincipal
		cfg.Views = views
	}
	cfg.BuildLater = c.sandboxLater
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
	if !c.sandboxLater {
		startSandbox(sb, logger)
	}
	return sb, nil
}

// earlySandbox is a sandbox being built while the ledger opens.
type earlySandbox struct {
	done chan struct{}
	sb   *exec.Sandbox
	err  error
}

// sandboxEarly starts deriving and creating the sandbox on its own
// goroutine (it needs the policy and the state directory, not the ledger),
// for gateway to take with sandboxFor. Call it after prepare.
func (c *common) sandboxEarly(logger *slog.Logger) {
	e := &earlySandbox{done: make(chan struct{})}
	c.early = e
	policy, err := c.file.CommandPolicy()
	if err != nil {
		e.err = err
		close(e.done)
		return
	}
	go func() {
		defer close(e.done)
		e.sb, e.err = c.sandbox(policy, logger)
	}()
}

// sandboxFor returns the sandbox sandboxEarly started, or builds it now.
func (c *common) sandboxFor(policy *validate.Policy, logger *slog.Logger) (*exec.Sandbox, error) {
	if c.early == nil {
		return c.sandbox(policy, logger)
	}
	e := c.early
	c.early = nil
	<-e.done
	return e.sb, e.err
}

// dropEarlySandbox closes the sandbox sandboxEarly started, when the
// gateway will not be built.
func (c *common) dropEarlySandbox() {
	if c.early == nil {
		return
	}
	if sb, err := c.sandboxFor(nil, nil); err == nil && sb != nil {
		_ = sb.Close()
	}
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

// afterFirstWrite passes writes through to w and calls fn, once, after the
// first: rigout stdio starts the sandbox build once initialize is answered.
type afterFirstWrite struct {
	w    io.Writer
	once sync.Once
	fn   func()
}

func (a *afterFirstWrite) Write(p []byte) (int, error) {
	n, err := a.w.Write(p)
	a.once.Do(a.fn)
	return n, err
}

// viewPrincipal is who a local command runs for, as its view sees it: a
// stdio downstream server is a principal of its own, "federation:NAME",
// with the work areas (downstream servers are shared by every token);
// else the token of an HTTP call (its name, roots and read-only scope),
// else the stdio client, one full principal. With the docker family on,
// a principal that may call docker_operations keeps the docker socket in
// sight (every other socket under /run is hidden).
func (c *common) viewPrincipal(ctx context.Context) exec.Principal {
	if name, ok := federation.DownstreamFromContext(ctx); ok {
		return exec.Principal{Name: "federation:" + name}
	}
	p, ok := auth.FromContext(ctx)
	if !ok {
		p = auth.Principal{Name: "stdio", Scopes: auth.FullScopes()}
	}
	vp := exec.Principal{Name: p.Name, Roots: p.Scopes.Roots, ReadOnly: p.Scopes.ReadOnly}
	if c.dockerOn() && p.Scopes.AllowTool("docker_operations") && !p.Scopes.ReadOnly {
		vp.Sockets = dockerSockets()
	}
	return vp
}

// dockerOn reports whether the docker family is served.
func (c *common) dockerOn() bool {
	return c.families.docker || (c.file != nil && c.file.Families.Docker)
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
func (c *common) workAreas() []string {
	var w []string
	for _, p := range filepath.SplitList(os.Getenv("RIGOUT_WORK_AREAS")) {
		if p != "" {
			w = append(w, p)
		}
	}
	if c.workDir != "" {
		w = append(w, c.workDir)
	}
	if c.file != nil {
		w = append(w, c.file.WorkAreas...)
	}
	return w
}

// secretFiles are files the gateway reads secrets from or must keep from
// commands, which views hide: the configuration file (tokens, client
// secrets), the credential aliases' files, a ledger kept outside the state
// directory with its key, and the ledger's anchor.
func (c *common) secretFiles() []string {
	var files []string
	if c.configPath != "" {
		if p, err := filepath.Abs(c.configPath); err == nil {
			files = append(files, p)
		}
	}
	if c.auditDB != "" {
		// A ledger kept outside the state directory, and its key beside it.
		if p, err := filepath.Abs(c.auditDB); err == nil {
			files = append(files, p, p+".key", p+"-wal", p+"-shm", p+".head")
		}
	}
	if c.file != nil {
		for _, spec := range c.file.Credentials {
			if spec.File != "" {
				files = append(files, spec.File)
			}
		}
		if c.file.Audit.AnchorFile != "" {
			files = append(files, c.file.Audit.AnchorFile)
		}
	}
	return files
}

// checkViews fails closed: where per-principal views are unavailable, a
// token confined to roots or to reading would be kept so by the command
// policy alone, so the gateway refuses to start with one unless the
// operator said --unsafe-no-views.
func (c *common) checkViews(sb *exec.Sandbox, logger *slog.Logger) error {
	if sb == nil || c.noViews {
		if c.noViews && sb != nil {
			logger.Warn("sandbox: --unsafe-no-views: commands of every token share the gateway's view of the machine; a token's roots and read-only scopes are kept by the command policy and Landlock, not by a view of its own")
		}
		return nil
	}
	var narrow []string
	if c.file != nil {
		for _, t := range c.file.Tokens {
			if len(t.Scopes.Roots) > 0 || t.Scopes.ReadOnly {
				narrow = append(narrow, t.Name)
			}
		}
		if o := c.file.OAuth; o != nil {
			for _, cl := range o.Clients {
				if len(cl.Scopes.Roots) > 0 || cl.Scopes.ReadOnly {
					narrow = append(narrow, "oauth client "+cl.ID)
				}
			}
			if rs := o.RegistrationScopes; o.AllowRegistration && (len(rs.Roots) > 0 || rs.ReadOnly) {
				narrow = append(narrow, "registration_scopes")
			}
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
	if st.Views {
		return nil
	}
	return fmt.Errorf("per-principal views are unavailable here (%s), and %s %s confined to roots or to reading: without a view of its own the kernel would not hold that; fix the cause (unprivileged user namespaces, kernel 6.18 for the calls' /proc), or start with --unsafe-no-views to keep them by the policy and Landlock alone",
		st.ViewsReason, strings.Join(narrow, ", "), map[bool]string{true: "is", false: "are"}[len(narrow) == 1])
}
