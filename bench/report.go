package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Row states.
const (
	statusOK     = "ok"
	statusNotYet = "not yet"
	statusFailed = "failed"
)

// Row is one line of the results table: a statistic of a rigout series
// beside the same statistic of its floor, measured in the same run.
type Row struct {
	Scenario string `json:"scenario"`         // "1" … "8"
	Name     string `json:"name"`             // what is compared, e.g. "stdio, argv [true], p50"
	Unit     string `json:"unit,omitempty"`   // of the two values: "ms", "calls/s", "MiB", …
	Better   string `json:"better,omitempty"` // "lower" or "higher": which way the metric improves
	Stat     string `json:"stat,omitempty"`   // statistic of each series: "median", "p95", "p99", …
	Floor    string `json:"floor,omitempty"`  // what the floor is
	Target   string `json:"target,omitempty"` // the target for the ratio, if any
	Status   string `json:"status"`           // statusOK, statusNotYet or statusFailed
	Note     string `json:"note,omitempty"`   // why not yet, what failed, or a caveat

	RigoutSeries string `json:"rigout_series,omitempty"` // key into Results.Series
	FloorSeries  string `json:"floor_series,omitempty"`  // key into Results.Series

	// Computed by Results.finish.
	RigoutValue float64  `json:"rigout_value"`
	FloorValue  float64  `json:"floor_value"`
	Ratio       float64  `json:"ratio"`    // RigoutValue / FloorValue
	RatioLo     float64  `json:"ratio_lo"` // 90% bootstrap interval of Ratio
	RatioHi     float64  `json:"ratio_hi"`
	Rigout      *Summary `json:"rigout_summary,omitempty"`
	FloorSum    *Summary `json:"floor_summary,omitempty"`
}

// Series is one set of raw samples.
type Series struct {
	Unit    string    `json:"unit"`
	Samples []float64 `json:"samples"`
}

// Machine describes where a run happened.
type Machine struct {
	CPUs      int     `json:"cpus"`
	CPUModel  string  `json:"cpu_model,omitempty"`
	MemoryMiB int64   `json:"memory_mib"`
	Kernel    string  `json:"kernel,omitempty"`
	Go        string  `json:"go"`
	LoadStart float64 `json:"load1_start"` // 1-minute load average when the run started
	LoadEnd   float64 `json:"load1_end"`
}

// Results is everything one run measured. Its methods are safe for
// concurrent use.
type Results struct {
	Date     string            `json:"date"`
	Started  time.Time         `json:"started"`
	Finished time.Time         `json:"finished"`
	Mode     string            `json:"mode"` // "full" or "quick"
	Command  string            `json:"command"`
	Revision string            `json:"revision,omitempty"`
	Machine  Machine           `json:"machine"`
	Rows     []Row             `json:"rows"`
	Series   map[string]Series `json:"series"`

	// mu protects Rows and Series while scenarios add to them.
	mu sync.Mutex
}

func newResults(mode, command string, now time.Time) *Results {
	return &Results{Date: now.Format("2006-01-02"), Started: now, Mode: mode, Command: command, Series: map[string]Series{}}
}

// AddSeries records raw samples under key. Adding to an existing key
// appends.
func (r *Results) AddSeries(key, unit string, samples []float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.Series[key]
	s.Unit = unit
	s.Samples = append(s.Samples, samples...)
	r.Series[key] = s
}

// AddRow adds a row; its figures are computed by finish.
func (r *Results) AddRow(row Row) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if row.Status == "" {
		row.Status = statusOK
	}
	r.Rows = append(r.Rows, row)
}

// Failed reports how many rows failed.
func (r *Results) Failed() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, row := range r.Rows {
		if row.Status == statusFailed {
			n++
		}
	}
	return n
}

// finish computes every row's figures from its series. A row whose series
// are missing or empty becomes a failed row.
func (r *Results) finish(now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Finished = now
	for i := range r.Rows {
		row := &r.Rows[i]
		if row.Status != statusOK {
			continue
		}
		a, b := r.Series[row.RigoutSeries].Samples, r.Series[row.FloorSeries].Samples
		if len(a) == 0 || len(b) == 0 {
			row.Status = statusFailed
			row.Note = strings.TrimSpace(row.Note + " (no samples)")
			continue
		}
		sa, sb := Summarize(a), Summarize(b)
		row.Rigout, row.FloorSum = &sa, &sb
		row.RigoutValue, row.FloorValue = sa.Stat(row.Stat), sb.Stat(row.Stat)
		row.Ratio = Ratio(row.RigoutValue, row.FloorValue)
		row.RatioLo, row.RatioHi = RatioInterval(a, b, statPercentile(row.Stat), uint64(i)+1)
	}
	// Stable order: by scenario, then as added.
	sort.SliceStable(r.Rows, func(i, j int) bool { return r.Rows[i].Scenario < r.Rows[j].Scenario })
}

// writeFiles writes <prefix>.md and <prefix>.json into dir.
// plot names the latency plot beside them, if one was drawn.
func (r *Results) writeFiles(dir, prefix, plot string) (md, js string, err error) {
	md = filepath.Join(dir, prefix+".md")
	js = filepath.Join(dir, prefix+".json")
	var sb strings.Builder
	r.writeMarkdown(&sb, plot)
	if err := os.WriteFile(md, []byte(sb.String()), 0o644); err != nil {
		return "", "", err
	}
	r.mu.Lock()
	b, err := json.MarshalIndent(r, "", " ")
	r.mu.Unlock()
	if err != nil {
		return "", "", err
	}
	if err := os.WriteFile(js, append(b, '\n'), 0o644); err != nil {
		return "", "", err
	}
	return md, js, nil
}

// writeMarkdown writes the report: a header naming the machine, the table
// and the notes.
func (r *Results) writeMarkdown(w io.Writer, plot string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.Machine
	fmt.Fprintf(w, "# rigout bench, %s (%s run)\n\n", r.Date, r.Mode)
	fmt.Fprintf(w, "Machine: %d CPUs (%s), %.1f GiB memory, Linux %s, %s; 1-minute load %.2f at start, %.2f at end.",
		m.CPUs, orDash(m.CPUModel), float64(m.MemoryMiB)/1024, orDash(m.Kernel), m.Go, m.LoadStart, m.LoadEnd)
	if r.Revision != "" {
		fmt.Fprintf(w, " Source: %s.", r.Revision)
	}
	if max(m.LoadStart, m.LoadEnd) > float64(m.CPUs) {
		fmt.Fprint(w, " The load average above the CPU count means other work shared the machine during the run.")
	}
	fmt.Fprintf(w, "\nCommand: `%s` (%s).\n\n", r.Command, r.Finished.Sub(r.Started).Round(time.Second))
	fmt.Fprintln(w, "Each ratio is rigout ÷ floor of the named statistic, both sides measured in this run, interleaved.")
	fmt.Fprintln(w, "Spread is the 90% bootstrap interval of that ratio. Absolute values are for context only; compare ratios.")
	fmt.Fprintln(w)
	r.table(w)
	fmt.Fprintln(w)
	if plot != "" {
		fmt.Fprintf(w, "Latency distributions of scenarios 2 and 7 against their floors: [%s](%s)\n\n", plot, plot)
	}
	notes := false
	for _, row := range r.Rows {
		if row.Note == "" {
			continue
		}
		if !notes {
			fmt.Fprintln(w, "Notes:")
			fmt.Fprintln(w)
			notes = true
		}
		fmt.Fprintf(w, "- %s. %s: %s\n", row.Scenario, row.Name, row.Note)
	}
}

// table writes the Markdown table.
func (r *Results) table(w io.Writer) {
	fmt.Fprintln(w, "| # | scenario | rigout | floor | ratio | spread | target |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---|---|")
	for _, row := range r.Rows {
		name := row.Name
		if row.Floor != "" {
			name += " — vs " + row.Floor
		}
		switch row.Status {
		case statusOK:
			better := ""
			switch row.Better {
			case "lower":
				better = " ↓"
			case "higher":
				better = " ↑"
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", row.Scenario, name,
				fmtValue(row.RigoutValue, row.Unit+better), fmtValue(row.FloorValue, row.Unit+better),
				fmtRatio(row.Ratio), fmtRatio(row.RatioLo)+"–"+fmtRatio(row.RatioHi), row.Target)
		default:
			fmt.Fprintf(w, "| %s | %s | %s | | | | %s |\n", row.Scenario, name, row.Status, row.Target)
		}
	}
}

// fmtValue prints v with three significant digits and its unit.
func fmtValue(v float64, unit string) string {
	return sig3(v) + " " + unit
}

func fmtRatio(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	if v >= 10 {
		return strconv.FormatFloat(v, 'f', 1, 64) + "×"
	}
	return strconv.FormatFloat(v, 'f', 2, 64) + "×"
}

// sig3 formats v with three significant digits, without exponent for the
// magnitudes bench reports.
func sig3(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	a := math.Abs(v)
	switch {
	case a == 0:
		return "0"
	case a >= 100:
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	d := max(0, 2-int(math.Floor(math.Log10(a))))
	return strconv.FormatFloat(v, 'f', d, 64)
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
