// Command rigout is the reference gateway: it serves rigout's tools to MCP
// clients over stdio or streamable HTTP.
//
//	rigout stdio                         serve one client on stdin/stdout
//	rigout serve [--addr 127.0.0.1:8765] serve streamable HTTP at /mcp
//	rigout version                       print the version
//
// Everything here parses flags and the environment into library
// configuration; the gateway itself lives in the rigout packages.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/transport"
)

const usage = `rigout — authenticated, policy-checked, audited machine access for AI agents over MCP

Usage:
  rigout stdio [flags]     serve one MCP client over stdin/stdout
  rigout serve [flags]     serve MCP over streamable HTTP
  rigout version           print the version

Run 'rigout COMMAND -h' for a command's flags.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run executes one command line and returns the exit code: 0 success,
// 1 failure, 2 usage error.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch args[0] {
	case "stdio":
		return runStdio(ctx, args[1:], stdin, stdout, stderr)
	case "serve":
		return runServe(ctx, args[1:], stderr)
	case "version", "--version", "-V":
		fmt.Fprintf(stdout, "rigout %s\n", rigout.Version)
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "rigout: unknown command %q. Expected one of: serve, stdio, version\n", args[0])
	return 2
}

// common holds the flags every serving command takes.
type common struct {
	logLevel  string
	workDir   string
	timeout   time.Duration
	maxOutput int
}

func (c *common) register(fs *flag.FlagSet) {
	fs.StringVar(&c.logLevel, "log-level", envOr("RIGOUT_LOG_LEVEL", "info"), "log level: debug, info, warn, error (env RIGOUT_LOG_LEVEL)")
	fs.StringVar(&c.workDir, "workdir", "", "working directory of commands that name none (default: the current directory)")
	fs.DurationVar(&c.timeout, "default-timeout", rigout.DefaultTimeout, "timeout of commands that set none")
	fs.IntVar(&c.maxOutput, "max-output", 1<<20, "bytes kept per output stream of a command")
}

// gateway builds the library configuration from the flags.
func (c *common) gateway(logger *slog.Logger) (*rigout.Gateway, error) {
	return rigout.New(rigout.Config{
		Logger:         logger,
		WorkDir:        c.workDir,
		DefaultTimeout: c.timeout,
		MaxOutput:      c.maxOutput,
	})
}

func (c *common) logger(stderr io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.logLevel)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})), nil
}

func runStdio(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("rigout stdio", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c common
	c.register(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "rigout stdio: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	logger, err := c.logger(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "rigout stdio: %v\n", err)
		return 2
	}
	gw, err := c.gateway(logger)
	if err != nil {
		fmt.Fprintf(stderr, "rigout stdio: %v\n", err)
		return 1
	}
	defer gw.Close()
	if err := transport.ServeStdio(ctx, gw.MCPServer(), stdin, stdout, transport.StdioConfig{Logger: logger}); err != nil {
		logger.Error("stdio transport failed", "err", err)
		return 1
	}
	return 0
}

func runServe(ctx context.Context, args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("rigout serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c common
	c.register(fs)
	addr := fs.String("addr", envOr("RIGOUT_ADDR", "127.0.0.1:8765"), "listen address (env RIGOUT_ADDR)")
	path := fs.String("path", transport.DefaultPath, "MCP endpoint path")
	stateless := fs.Bool("stateless", false, "serve every POST on its own; GET and DELETE answer 405")
	maxBody := fs.Int64("max-body", transport.DefaultMaxFrame, "largest request body in bytes (413 above)")
	shutdown := fs.Duration("shutdown-timeout", transport.DefaultShutdownTimeout, "how long in-flight calls may drain on SIGINT/SIGTERM")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "rigout serve: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	logger, err := c.logger(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "rigout serve: %v\n", err)
		return 2
	}
	if !loopbackAddr(*addr) {
		fmt.Fprintf(stderr, "rigout serve: refusing to listen on %s: this build has no authentication yet, so it binds loopback addresses only (127.0.0.0/8, ::1, localhost)\n", *addr)
		return 2
	}
	gw, err := c.gateway(logger)
	if err != nil {
		fmt.Fprintf(stderr, "rigout serve: %v\n", err)
		return 1
	}
	defer gw.Close()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "rigout serve: %v\n", err)
		return 1
	}
	h := transport.NewHTTP(gw.MCPServer(), transport.HTTPConfig{
		Name:            gw.Config().Name,
		Version:         gw.Config().Version,
		Path:            *path,
		Stateless:       *stateless,
		MaxBody:         *maxBody,
		ShutdownTimeout: *shutdown,
		Logger:          logger,
	})
	defer h.Close()
	url := fmt.Sprintf("http://%s%s", ln.Addr(), *path)
	logger.Info("serving MCP over streamable HTTP", "url", url, "stateless", *stateless)
	fmt.Fprintf(stderr, "rigout %s listening on %s\n", rigout.Version, url)
	if err := h.Serve(ctx, ln); err != nil {
		logger.Error("http transport failed", "err", err)
		return 1
	}
	logger.Info("stopped")
	return 0
}

// loopbackAddr reports whether a listen address is on the loopback
// interface: 127.0.0.0/8, ::1 or localhost. Wildcards and names are not.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
