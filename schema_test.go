package rigout

import (
	"encoding/json"
	"testing"
)

// TestSchemaTakesDecodedJSON checks arguments as encoding/json decodes them
// (every number a float64) and as an in-process client passes them (Go
// ints): whole numbers are integers, fractions are not.
func TestSchemaTakesDecodedJSON(t *testing.T) {
	s, err := compileSchema("t", "input", json.RawMessage(`{"type":"object","properties":{
		"n": {"type": "integer", "minimum": 1},
		"list": {"type": "array", "items": {"type": "integer"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args map[string]any
		ok   bool
	}{
		{"json whole number", decode(t, `{"n": 2}`), true},
		{"json large whole number", decode(t, `{"n": 1e300}`), true},
		{"json fraction", decode(t, `{"n": 2.5}`), false},
		{"json below minimum", decode(t, `{"n": 0}`), false},
		{"json nested", decode(t, `{"list": [1, 2, 3]}`), true},
		{"json nested fraction", decode(t, `{"list": [1, 2.5]}`), false},
		{"go int", map[string]any{"n": 3}, true},
		{"go slice", map[string]any{"list": []any{1, 2}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := s.check("t", tt.args); (err == nil) != tt.ok {
				t.Errorf("check = %v, want ok %v", err, tt.ok)
			}
		})
	}
}

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}
