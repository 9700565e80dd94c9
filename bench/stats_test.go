package main

import (
	"math"
	"slices"
	"testing"
)

func TestPercentile(t *testing.T) {
	xs := []float64{15, 20, 35, 40, 50} // deliberately not all in order below
	tests := []struct {
		name string
		xs   []float64
		p    float64
		want float64
	}{
		{"min", xs, 0, 15},
		{"max", xs, 100, 50},
		{"median odd", xs, 50, 35},
		{"median even", []float64{1, 2, 3, 4}, 50, 2.5},
		{"p25 interpolates", xs, 25, 20},
		{"p40 interpolates", xs, 40, 29},       // rank 1.6: 20 + 0.6*15
		{"p90 interpolates", xs, 90, 46},       // rank 3.6: 40 + 0.6*10
		{"p99 of 1..100", seq(100), 99, 99.01}, // rank 98.01
		{"unsorted input", []float64{50, 15, 40, 20, 35}, 50, 35},
		{"one sample", []float64{7}, 99, 7},
		{"below 0 clamps", xs, -5, 15},
		{"above 100 clamps", xs, 150, 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Percentile(tt.xs, tt.p); math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("Percentile(%v, %v) = %v, want %v", tt.xs, tt.p, got, tt.want)
			}
		})
	}
	if got := Percentile(nil, 50); !math.IsNaN(got) {
		t.Errorf("Percentile(nil) = %v, want NaN", got)
	}
}

func TestPercentileDoesNotModifyInput(t *testing.T) {
	xs := []float64{3, 1, 2}
	Percentile(xs, 50)
	Summarize(xs)
	if !slices.Equal(xs, []float64{3, 1, 2}) {
		t.Errorf("input changed to %v", xs)
	}
}

func TestSummarize(t *testing.T) {
	s := Summarize(seq(101)) // 1..101: percentiles land on samples
	want := Summary{N: 101, Min: 1, P5: 6, P25: 26, Median: 51, P75: 76, P95: 96, P99: 100, Max: 101, Mean: 51}
	if s != want {
		t.Errorf("Summarize(1..101) = %+v, want %+v", s, want)
	}
	for name, v := range map[string]float64{"median": 51, "p95": 96, "p99": 100, "max": 101, "p25": 26, "unknown": 51} {
		if got := s.Stat(name); got != v {
			t.Errorf("Stat(%q) = %v, want %v", name, got, v)
		}
	}
	if (Summarize(nil) != Summary{}) {
		t.Error("Summarize(nil) is not the zero Summary")
	}
}

func TestMedianAndSpreadOfKnownSeries(t *testing.T) {
	xs := []float64{10, 12, 11, 13, 100} // one outlier
	if got := Median(xs); got != 12 {
		t.Errorf("Median = %v, want 12 (robust to the outlier)", got)
	}
	s := Summarize(xs)
	if s.P25 != 11 || s.P75 != 13 {
		t.Errorf("IQR = %v–%v, want 11–13", s.P25, s.P75)
	}
}

func TestRatio(t *testing.T) {
	tests := []struct {
		a, b, want float64
	}{
		{3, 2, 1.5},
		{1, 4, 0.25},
		{0, 4, 0},
	}
	for _, tt := range tests {
		if got := Ratio(tt.a, tt.b); got != tt.want {
			t.Errorf("Ratio(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
	for _, bad := range [][2]float64{{1, 0}, {math.NaN(), 1}, {1, math.NaN()}} {
		if got := Ratio(bad[0], bad[1]); !math.IsNaN(got) {
			t.Errorf("Ratio(%v, %v) = %v, want NaN", bad[0], bad[1], got)
		}
	}
}

func TestRatioIntervalExactWhenNoNoise(t *testing.T) {
	a := []float64{2, 2, 2, 2}
	b := []float64{1, 1, 1, 1}
	lo, hi := RatioInterval(a, b, 50, 1)
	if lo != 2 || hi != 2 {
		t.Errorf("interval = %v–%v, want 2–2", lo, hi)
	}
}

func TestRatioIntervalContainsRatio(t *testing.T) {
	// a is b scaled by 1.5 with pair-wise noise that both sides share.
	var a, b []float64
	for i := range 200 {
		noise := float64(i%17) * 0.1
		b = append(b, 1+noise)
		a = append(a, 1.5*(1+noise))
	}
	for _, p := range []float64{50, 95, 99} {
		lo, hi := RatioInterval(a, b, p, 7)
		r := Ratio(Percentile(a, p), Percentile(b, p))
		if !(lo <= r && r <= hi) {
			t.Errorf("p%v: ratio %v outside its interval %v–%v", p, r, lo, hi)
		}
		// Paired resampling keeps the shared noise out of the ratio.
		if hi-lo > 1e-9 {
			t.Errorf("p%v: paired interval %v–%v should be exact for a pure scale", p, lo, hi)
		}
	}
}

func TestRatioIntervalWidensWithNoise(t *testing.T) {
	quiet := []float64{10, 10.1, 9.9, 10, 10.05, 9.95, 10, 10}
	noisy := []float64{10, 14, 6, 12, 8, 15, 5, 10}
	floor := []float64{5, 5.1, 4.9, 5, 5, 5, 5.05, 4.95}
	qlo, qhi := RatioInterval(quiet, floor, 50, 3)
	nlo, nhi := RatioInterval(noisy, floor, 50, 3)
	if !(nhi-nlo > qhi-qlo) {
		t.Errorf("noisy interval %v–%v is not wider than quiet %v–%v", nlo, nhi, qlo, qhi)
	}
}

func TestRatioIntervalUnpairedAndEmpty(t *testing.T) {
	lo, hi := RatioInterval([]float64{4, 4, 4}, []float64{2, 2}, 50, 1)
	if lo != 2 || hi != 2 {
		t.Errorf("unpaired interval = %v–%v, want 2–2", lo, hi)
	}
	lo, hi = RatioInterval(nil, []float64{1}, 50, 1)
	if !math.IsNaN(lo) || !math.IsNaN(hi) {
		t.Errorf("empty interval = %v–%v, want NaN", lo, hi)
	}
}

func TestRatioIntervalDeterministic(t *testing.T) {
	a := []float64{1, 5, 2, 8, 3, 9, 4}
	b := []float64{2, 3, 1, 4, 2, 5, 3}
	lo1, hi1 := RatioInterval(a, b, 50, 42)
	lo2, hi2 := RatioInterval(a, b, 50, 42)
	if lo1 != lo2 || hi1 != hi2 {
		t.Errorf("same seed gave %v–%v and %v–%v", lo1, hi1, lo2, hi2)
	}
}

func TestSig3(t *testing.T) {
	tests := map[float64]string{
		0:          "0",
		0.000123:   "0.000123",
		0.5:        "0.500",
		0.931:      "0.931",
		3.284:      "3.28",
		21.84:      "21.8",
		149.4:      "149",
		14847.2:    "14847",
		math.NaN(): "—",
	}
	for v, want := range tests {
		if got := sig3(v); got != want {
			t.Errorf("sig3(%v) = %q, want %q", v, got, want)
		}
	}
}

// seq returns 1, 2, …, n.
func seq(n int) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = float64(i + 1)
	}
	return xs
}
