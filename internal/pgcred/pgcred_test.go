package pgcred

import (
	"errors"
	"testing"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		name                 string
		dsn, given, resolved string
		wantErr              error
	}{
		{"no password at all", "postgres://rigout@db/rigout", "", "", nil},
		{"given explicitly", "postgres://rigout@db/rigout", "pw", "pw", nil},
		{"from PGPASSWORD or a password file", "postgres://rigout@db/rigout", "", "pw", ErrAmbient},
		{"key=value, from the environment", "host=db user=rigout dbname=rigout", "", "pw", ErrAmbient},
		{"in the URL", "postgres://rigout:pw@db/rigout", "", "pw", nil},
		{"in the URL's query", "postgres://rigout@db/rigout?password=pw", "", "pw", nil},
		{"in key=value", "host=db user=rigout password=pw", "", "pw", nil},
		{"a parameter merely named like one", "host=db user=rigout application_name=nopassword", "", "pw", ErrAmbient},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := Check(tt.dsn, tt.given, tt.resolved); !errors.Is(err, tt.wantErr) {
				t.Fatalf("Check = %v, want %v", err, tt.wantErr)
			}
		})
	}
}
