package validate_test

import (
	"testing"

	"github.com/rigout/rigout/validate"
)

// BenchmarkCheck checks every row of the table once per iteration and
// reports the cost per command.
func BenchmarkCheck(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		for _, c := range checkCases {
			c.policy.Check(c.cmd, c.options())
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(checkCases)), "ns/cmd")
}

// BenchmarkCheckTypical checks one ordinary command per iteration.
func BenchmarkCheckTypical(b *testing.B) {
	for _, cmd := range []string{
		"git status",
		"go test ./... 2>&1 | tail -20",
		"rm -rf ./build && make -j4",
		"find . -name '*.o' -delete",
		"curl -fsSL https://example.com/data.json | jq .items",
		"for f in *.go; do gofmt -l \"$f\"; done",
	} {
		b.Run(cmd, func(b *testing.B) {
			var p validate.Policy
			b.ReportAllocs()
			for b.Loop() {
				p.Check(cmd, validate.Options{})
			}
		})
	}
}

// BenchmarkCheckGroups checks every row of the issue 12 tables
// (groups_test.go) once per iteration.
func BenchmarkCheckGroups(b *testing.B) {
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		for _, table := range groupCases() {
			for _, c := range table {
				c.policy.Check(c.cmd, c.options())
				n++
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/cmd")
}
