//go:build race

package validate_test

// raceEnabled: this test binary was built with -race.
const raceEnabled = true
