package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fake returns a scenario that records a rigout series twice its floor.
func fake(id string) scenario {
	return scenario{ID: id, Title: "fake " + id, Quick: time.Second, Full: time.Second,
		Run: func(ctx context.Context, b *bench) error {
			b.res.AddSeries(id+"/rigout", "ms", []float64{2, 4, 6})
			b.res.AddSeries(id+"/floor", "ms", []float64{1, 2, 3})
			b.res.AddRow(Row{Scenario: id, Name: "fake", Unit: "ms", Better: "lower", Stat: "median",
				Floor: "half", RigoutSeries: id + "/rigout", FloorSeries: id + "/floor"})
			return nil
		}}
}

func runFake(t *testing.T, list ...scenario) (code int, stdout, stderr string, res *Results) {
	t.Helper()
	out := t.TempDir()
	var so, se bytes.Buffer
	code = execute(context.Background(), options{quick: true, out: out}, t.TempDir(), "cd bench && go run . --quick", list, &so, &se)
	b, err := os.ReadFile(filepath.Join(out, time.Now().Format("2006-01-02")+"-quick.json"))
	if err != nil {
		t.Fatalf("results JSON: %v (stderr: %s)", err, se.String())
	}
	res = &Results{}
	if err := json.Unmarshal(b, res); err != nil {
		t.Fatal(err)
	}
	return code, so.String(), se.String(), res
}

func TestExecuteSucceeds(t *testing.T) {
	code, stdout, _, res := runFake(t, fake("1"), scenario{ID: "8", Title: "later", NotYet: "not landed"})
	if code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
	if len(res.Rows) != 2 {
		t.Fatalf("rows = %+v, want 2", res.Rows)
	}
	r := res.Rows[0]
	if r.Status != statusOK || r.Ratio != 2 || r.RigoutValue != 4 || r.FloorValue != 2 {
		t.Errorf("row = %+v, want ok, ratio 2 of medians 4 and 2", r)
	}
	if res.Rows[1].Status != statusNotYet {
		t.Errorf("row 2 status = %q, want %q", res.Rows[1].Status, statusNotYet)
	}
	if got := res.Series["1/rigout"].Samples; len(got) != 3 {
		t.Errorf("raw samples not kept: %v", got)
	}
	for _, want := range []string{"| 1 | fake — vs half | 4.00 ms ↓ | 2.00 ms ↓ | 2.00× |", "| 8 | later | not yet |"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
}

func TestExecuteFailsWhenAScenarioFails(t *testing.T) {
	failing := scenario{ID: "2", Title: "broken", Quick: time.Second, Full: time.Second,
		Run: func(context.Context, *bench) error { return errors.New("sshd would not start") }}
	code, stdout, stderr, res := runFake(t, fake("1"), failing)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if !strings.Contains(stderr, "sshd would not start") {
		t.Errorf("stderr does not say why: %s", stderr)
	}
	if !strings.Contains(stdout, "| 2 | broken | failed |") {
		t.Errorf("table does not list the failure:\n%s", stdout)
	}
	if res.Rows[1].Status != statusFailed || res.Rows[0].Status != statusOK {
		t.Errorf("rows = %+v", res.Rows)
	}
}

func TestExecuteFailsOnPanic(t *testing.T) {
	panics := scenario{ID: "3", Title: "panics", Quick: time.Second, Full: time.Second,
		Run: func(context.Context, *bench) error { panic("boom") }}
	if code, _, _, _ := runFake(t, panics); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
}

func TestExecuteFailsOnEmptySeries(t *testing.T) {
	empty := scenario{ID: "5", Title: "empty", Quick: time.Second, Full: time.Second,
		Run: func(_ context.Context, b *bench) error {
			b.res.AddRow(Row{Scenario: "5", Name: "no samples", Stat: "median", RigoutSeries: "x", FloorSeries: "y"})
			return nil
		}}
	code, _, _, res := runFake(t, empty)
	if code != 1 || res.Rows[0].Status != statusFailed {
		t.Errorf("exit %d, row %+v: a row without samples must fail the run", code, res.Rows[0])
	}
}

func TestScenarioBudgetStopsLoops(t *testing.T) {
	slow := scenario{ID: "1", Title: "slow", Quick: 50 * time.Millisecond, Full: time.Second,
		Run: func(ctx context.Context, _ *bench) error {
			<-ctx.Done()
			return ctx.Err()
		}}
	start := time.Now()
	code, _, _, _ := runFake(t, slow)
	if code != 1 {
		t.Errorf("exit %d, want 1 for a scenario that ran out of time without results", code)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("budget of 50ms took %v", d)
	}
}

func TestUsageErrors(t *testing.T) {
	var so, se bytes.Buffer
	if code := run(context.Background(), []string{"--no-such-flag"}, &so, &se); code != 2 {
		t.Errorf("unknown flag: exit %d, want 2", code)
	}
	if code := run(context.Background(), []string{"extra"}, &so, &se); code != 2 {
		t.Errorf("extra argument: exit %d, want 2", code)
	}
}

func TestEveryScenarioIsListed(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range scenarios() {
		if seen[s.ID] {
			t.Errorf("scenario %s listed twice", s.ID)
		}
		seen[s.ID] = true
		if (s.Run == nil) == (s.NotYet == "") {
			t.Errorf("scenario %s: exactly one of Run and NotYet must be set", s.ID)
		}
		if s.Run != nil && (s.Quick <= 0 || s.Full <= 0) {
			t.Errorf("scenario %s has no time budget", s.ID)
		}
	}
	for _, id := range []string{"1", "2", "3", "4", "5", "6", "7", "8", "9"} {
		if !seen[id] {
			t.Errorf("scenario %s is missing: list it, as \"not yet\" if need be", id)
		}
	}
	var quick, full time.Duration
	for _, s := range scenarios() {
		quick += s.Quick
		full += s.Full
	}
	if quick > 170*time.Second || full > 26*time.Minute {
		t.Errorf("budgets add up to %v quick, %v full; want under 2m50s and 26m", quick, full)
	}
}

func TestJSONLFloorRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "floor.jsonl")
	j, err := openJSONL(path)
	if err != nil {
		t.Fatal(err)
	}
	rate, err := recordWindow(context.Background(), j, 4, 50*time.Millisecond, 2)
	if err != nil || rate <= 0 || math.IsInf(rate, 0) {
		t.Fatalf("recordWindow = %v, %v", rate, err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	var e struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(lines[len(lines)-1], &e); err != nil || e.Type != "tool.call" {
		t.Errorf("last line %q: %v", lines[len(lines)-1], err)
	}
}

func TestResultPrefix(t *testing.T) {
	for _, tc := range []struct {
		opts options
		want string
	}{
		{options{}, "2026-12-02"},
		{options{quick: true}, "2026-12-02-quick"},
		{options{only: map[string]bool{"10": true, "2": true, "6": true}}, "2026-12-02-only-2-6-10"},
		{options{quick: true, only: map[string]bool{"8": true}}, "2026-12-02-quick-only-8"},
	} {
		if got := resultPrefix("2026-12-02", tc.opts); got != tc.want {
			t.Errorf("resultPrefix(%+v) = %q, want %q", tc.opts, got, tc.want)
		}
	}
}
