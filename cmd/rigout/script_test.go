package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/rigout/rigout/internal/runstate"
)

// TestScripts drives the rigout binary end to end with the scripts in
// testdata/script: each gets its own work directory, home and state
// directory (RIGOUT_STATE_DIR=$WORK/state), and any gateway a script
// leaves running is killed — by the identity it recorded, so only a
// process the script started.
func TestScripts(t *testing.T) {
	bin := rigoutBinary(t)
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			home := filepath.Join(env.WorkDir, "home")
			state := filepath.Join(env.WorkDir, "state")
			if err := os.MkdirAll(home, 0o700); err != nil {
				return err
			}
			env.Setenv("HOME", home)
			env.Setenv("RIGOUT_STATE_DIR", state)
			env.Setenv("PATH", filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
			env.Setenv("BINDIR", filepath.Dir(bin)) // for scripts that narrow PATH
			env.Defer(func() {
				st := runstate.Inspect(state)
				if st.State != runstate.Running {
					return
				}
				if p, err := runstate.Open(st.Runtime.Identity); err == nil {
					t.Errorf("a gateway was left running (PID %d); killed", st.Runtime.PID)
					p.Signal(syscall.SIGKILL)
					p.Close()
				}
			})
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"rigout":       cmdRigout,
			"spawn":        cmdSpawn,
			"alive":        cmdAlive,
			"fakeruntime":  cmdFakeRuntime,
			"jsonpath":     cmdJSONPath,
			"freeport":     cmdFreePort,
			"secretabsent": cmdSecretAbsent,
			"httpstatus":   cmdHTTPStatus,
			"readenv":      cmdReadEnv,
			"procclean":    cmdProcClean,
		},
	})
}

// rigout [exit=N] ARGS... runs the binary and checks its exit status
// (default 0); stdout and stderr are kept for the next commands.
func cmdRigout(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("use rigout exit=N instead of !")
	}
	want := 0
	if len(args) > 0 && strings.HasPrefix(args[0], "exit=") {
		n, err := strconv.Atoi(strings.TrimPrefix(args[0], "exit="))
		ts.Check(err)
		want, args = n, args[1:]
	}
	err := ts.Exec("rigout", args...)
	got := 0
	var ee *osexec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		ts.Fatalf("rigout: %v", err)
	}
	if got != want {
		ts.Fatalf("rigout %s: exit status %d, want %d", strings.Join(args, " "), got, want)
	}
}

// spawn VAR starts a process that has nothing to do with rigout (a
// sleep), stores its PID in $VAR, and kills it when the script ends.
func cmdSpawn(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: spawn VAR")
	}
	cmd := osexec.Command("sleep", "600")
	ts.Check(cmd.Start())
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	ts.Defer(func() { cmd.Process.Kill(); <-done })
	ts.Setenv(args[0], strconv.Itoa(cmd.Process.Pid))
}

// alive PID checks that the process is still running (! alive: that it
// is not).
func cmdAlive(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: alive PID")
	}
	pid, err := strconv.Atoi(args[0])
	ts.Check(err)
	_, err = runstate.Of(pid)
	if alive := err == nil; alive == neg {
		ts.Fatalf("process %d alive=%v, want %v", pid, alive, !neg)
	}
}

// fakeruntime PID writes runtime.json and the PID file as a gateway that
// has since died would have left them, naming PID with a start time that
// is not its own.
func cmdFakeRuntime(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: fakeruntime PID")
	}
	pid, err := strconv.Atoi(args[0])
	ts.Check(err)
	id, err := runstate.Of(pid)
	ts.Check(err)
	dir := ts.Getenv("RIGOUT_STATE_DIR")
	ts.Check(os.MkdirAll(dir, 0o700))
	rt := runstate.Runtime{Identity: runstate.Identity{PID: pid, StartTime: id.StartTime + 1, BootID: id.BootID},
		URL: "http://127.0.0.1:9/mcp", HealthURL: "http://127.0.0.1:9/health"}
	b, _ := json.Marshal(rt)
	ts.Check(os.WriteFile(filepath.Join(dir, runstate.RuntimeFile), b, 0o600))
	ts.Check(os.WriteFile(filepath.Join(dir, runstate.PIDFile), []byte(args[0]+"\n"), 0o600))
}

// jsonpath FILE PATH [WANT] parses FILE (or "stdout") as JSON and checks
// that the dotted PATH exists and, if WANT is given, that its value printed
// with %v is WANT. A path element that is a number indexes an array.
func cmdJSONPath(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: jsonpath FILE PATH [WANT]")
	}
	var v any
	if err := json.Unmarshal([]byte(ts.ReadFile(args[0])), &v); err != nil {
		ts.Fatalf("%s is not JSON: %v", args[0], err)
	}
	found := true
	for _, k := range strings.Split(args[1], ".") {
		switch c := v.(type) {
		case map[string]any:
			v, found = c[k]
		case []any:
			i, err := strconv.Atoi(k)
			found = err == nil && i >= 0 && i < len(c)
			if found {
				v = c[i]
			}
		default:
			found = false
		}
		if !found {
			break
		}
	}
	ok := found
	if found && len(args) == 3 {
		ok = fmt.Sprint(v) == args[2]
	}
	if ok == neg {
		ts.Fatalf("jsonpath %s %s: found=%v value=%v, want %v", args[0], args[1], found, v, args[2:])
	}
}

// freeport VAR stores in $VAR a loopback port nothing listens on.
func cmdFreePort(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: freeport VAR")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	ts.Setenv(args[0], strconv.Itoa(port))
}

// secretabsent FILE SECRETFILE fails if FILE (or stdout, stderr) holds
// the secret kept in SECRETFILE (trimmed; at least 16 bytes, or the check
// would prove nothing).
func cmdSecretAbsent(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || neg {
		ts.Fatalf("usage: secretabsent FILE SECRETFILE")
	}
	secret := strings.TrimSpace(ts.ReadFile(args[1]))
	if len(secret) < 16 {
		ts.Fatalf("%s holds %d bytes: too short to look for", args[1], len(secret))
	}
	if strings.Contains(ts.ReadFile(args[0]), secret) {
		ts.Fatalf("%s shows the secret from %s", args[0], args[1])
	}
}

// httpstatus URL HOST WANT sends GET URL with the Host header HOST and
// checks the status code.
func cmdHTTPStatus(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 || neg {
		ts.Fatalf("usage: httpstatus URL HOST WANT")
	}
	req, err := http.NewRequest(http.MethodGet, args[0], nil)
	ts.Check(err)
	req.Host = args[1]
	resp, err := http.DefaultClient.Do(req)
	ts.Check(err)
	resp.Body.Close()
	if strconv.Itoa(resp.StatusCode) != args[2] {
		ts.Fatalf("GET %s (Host %s): %s, want %s", args[0], args[1], resp.Status, args[2])
	}
}

// readenv VAR FILE sets $VAR to FILE's content, trimmed.
func cmdReadEnv(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || neg {
		ts.Fatalf("usage: readenv VAR FILE")
	}
	ts.Setenv(args[0], strings.TrimSpace(ts.ReadFile(args[1])))
}

// procclean PID TEXT fails if TEXT is in the command line or the
// environment of process PID (as /proc shows them to other processes).
func cmdProcClean(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || neg {
		ts.Fatalf("usage: procclean PID TEXT")
	}
	for _, f := range []string{"cmdline", "environ"} {
		b, err := os.ReadFile("/proc/" + args[0] + "/" + f)
		ts.Check(err)
		if len(b) == 0 && f == "cmdline" {
			ts.Fatalf("/proc/%s/cmdline is empty: not a live process", args[0])
		}
		if strings.Contains(string(b), args[1]) {
			ts.Fatalf("/proc/%s/%s shows %q", args[0], f, args[1])
		}
	}
}
