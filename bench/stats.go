package main

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Summary describes one series of samples. Percentiles use linear
// interpolation between the closest ranks (R type 7, numpy's default), so
// the median of an even-sized series is the mean of its two middle values.
type Summary struct {
	N      int     `json:"n"`
	Min    float64 `json:"min"`
	P5     float64 `json:"p5"`
	P25    float64 `json:"p25"`
	Median float64 `json:"median"`
	P75    float64 `json:"p75"`
	P95    float64 `json:"p95"`
	P99    float64 `json:"p99"`
	Max    float64 `json:"max"`
	Mean   float64 `json:"mean"`
}

// Summarize returns the summary of xs. xs is not modified. An empty series
// has the zero Summary.
func Summarize(xs []float64) Summary {
	if len(xs) == 0 {
		return Summary{}
	}
	s := sorted(xs)
	sum := 0.0
	for _, x := range s {
		sum += x
	}
	return Summary{
		N:      len(s),
		Min:    s[0],
		P5:     percentileSorted(s, 5),
		P25:    percentileSorted(s, 25),
		Median: percentileSorted(s, 50),
		P75:    percentileSorted(s, 75),
		P95:    percentileSorted(s, 95),
		P99:    percentileSorted(s, 99),
		Max:    s[len(s)-1],
		Mean:   sum / float64(len(s)),
	}
}

// Stat picks one statistic out of a summary by name: "p5", "p25",
// "median", "p75", "p95", "p99" or "max". Any other name is the median.
func (s Summary) Stat(name string) float64 {
	switch name {
	case "p5":
		return s.P5
	case "p25":
		return s.P25
	case "p75":
		return s.P75
	case "p95":
		return s.P95
	case "p99":
		return s.P99
	case "max":
		return s.Max
	}
	return s.Median
}

// Percentile returns the p-th percentile (0 ≤ p ≤ 100) of xs, or NaN for an
// empty series. xs is not modified.
func Percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return percentileSorted(sorted(xs), p)
}

// Median is Percentile(xs, 50).
func Median(xs []float64) float64 { return Percentile(xs, 50) }

// percentileSorted is Percentile on an ascending, non-empty series.
func percentileSorted(s []float64, p float64) float64 {
	if p <= 0 {
		return s[0]
	}
	if p >= 100 {
		return s[len(s)-1]
	}
	rank := p / 100 * float64(len(s)-1)
	lo := int(math.Floor(rank))
	hi := min(lo+1, len(s)-1)
	frac := rank - float64(lo)
	return s[lo] + frac*(s[hi]-s[lo])
}

func sorted(xs []float64) []float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s
}

// Ratio returns a/b, or NaN when b is zero or either is NaN.
func Ratio(a, b float64) float64 {
	if b == 0 || math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	return a / b
}

// bootstrapIters is how many resamples RatioInterval draws.
const bootstrapIters = 2000

// RatioInterval estimates how much the ratio stat(a)/stat(b) moves with the
// noise in the samples: it resamples the series with replacement
// bootstrapIters times and returns the 5th and 95th percentiles of the
// resampled ratios (a 90% bootstrap interval). stat is a percentile in
// [0, 100].
//
// When a and b have the same length they are taken as interleaved pairs
// (a[i] was measured next to b[i]) and resampled together, which keeps the
// noise the two sides shared; otherwise each side is resampled on its own.
// The seed makes the interval reproducible. It returns NaN, NaN when either
// series is empty.
func RatioInterval(a, b []float64, stat float64, seed uint64) (lo, hi float64) {
	if len(a) == 0 || len(b) == 0 {
		return math.NaN(), math.NaN()
	}
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	paired := len(a) == len(b)
	ra := make([]float64, len(a))
	rb := make([]float64, len(b))
	ratios := make([]float64, 0, bootstrapIters)
	for range bootstrapIters {
		for i := range ra {
			j := rng.IntN(len(a))
			ra[i] = a[j]
			if paired {
				rb[i] = b[j]
			}
		}
		if !paired {
			for i := range rb {
				rb[i] = b[rng.IntN(len(b))]
			}
		}
		slices.Sort(ra)
		slices.Sort(rb)
		r := Ratio(percentileSorted(ra, stat), percentileSorted(rb, stat))
		if !math.IsNaN(r) {
			ratios = append(ratios, r)
		}
	}
	if len(ratios) == 0 {
		return math.NaN(), math.NaN()
	}
	slices.Sort(ratios)
	return percentileSorted(ratios, 5), percentileSorted(ratios, 95)
}

// statPercentile maps a statistic name to the percentile RatioInterval
// takes.
func statPercentile(name string) float64 {
	switch name {
	case "p5":
		return 5
	case "p25":
		return 25
	case "p75":
		return 75
	case "p95":
		return 95
	case "p99":
		return 99
	case "max":
		return 100
	}
	return 50
}
