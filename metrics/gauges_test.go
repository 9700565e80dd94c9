package metrics_test

import (
	"context"
	"testing"

	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/metrics"
	"github.com/rigout/rigout/sessions"
)

// hostCounts stands in for an SSH router's pool (remote.Router.Connections
// is tested against the in-process SSH server in package exec).
type hostCounts map[string]int

func (h hostCounts) Connections() map[string]int { return h }

// TestGauges: background processes, terminals and pooled connections are
// read at scrape time.
func TestGauges(t *testing.T) {
	m0, err := sessions.New(sessions.Config{Local: &exec.Local{UnsafeNoSandbox: true}, SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m0.Close() })
	m := metrics.New(metrics.Config{Sessions: m0, Pool: hostCounts{"web1": 2, "db": 1}})
	p, err := m0.Start(context.Background(), "alice", exec.Command{Argv: []string{"sleep", "30"}})
	if err != nil {
		t.Fatal(err)
	}
	fams := scrape(t, m.Handler())
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"rigout_background_processes", nil, 1},
		{"rigout_terminal_sessions", nil, 0},
		{"rigout_ssh_pool_connections", map[string]string{"host": "web1"}, 2},
		{"rigout_ssh_pool_connections", nil, 3},
	} {
		if got := value(fams, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	_, _ = p.Wait(context.Background())
	if got := value(scrape(t, m.Handler()), "rigout_background_processes", nil); got != 0 {
		t.Errorf("after the process stopped: %v", got)
	}
}
