package validate_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rigout/rigout/validate"
)

func TestSlowCorpus(t *testing.T) {
	dir := os.Getenv("CORPUS")
	if dir == "" {
		t.Skip()
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	var p validate.Policy
	for _, f := range files {
		data, _ := os.ReadFile(f)
		lines := strings.Split(string(data), "\n")
		if len(lines) < 2 {
			continue
		}
		s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "string("), ")"))
		if err != nil {
			continue
		}
		start := time.Now()
		p.Check(s, validate.Options{})
		p.CheckArgv(strings.Fields(s), validate.Options{})
		if d := time.Since(start); d > 5*time.Millisecond {
			fmt.Printf("%v %s %q\n", d, filepath.Base(f), s[:min(len(s), 200)])
		}
	}
}
