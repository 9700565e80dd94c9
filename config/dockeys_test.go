package config_test

import (
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rigout/rigout/config"
)

// TestDocsDocumentEveryConfigKey fails when a key of the configuration
// file is missing from docs/CONFIGURATION.md (quoted as `key`), so a new
// setting cannot ship undocumented.
func TestDocsDocumentEveryConfigKey(t *testing.T) {
	b, err := os.ReadFile("../docs/CONFIGURATION.md")
	if err != nil {
		t.Fatal(err)
	}
	section := string(b)
	keys := map[string]bool{}
	configKeys(reflect.TypeFor[config.File](), keys)
	if len(keys) < 30 {
		t.Fatalf("found only %d keys; the walk is broken", len(keys))
	}
	for k := range keys {
		if !strings.Contains(section, "`"+k+"`") && !strings.Contains(section, `"`+k+`"`) {
			t.Errorf("configuration key %q is not documented in docs/CONFIGURATION.md", k)
		}
	}
}

// configKeys adds every JSON key reachable from t.
func configKeys(t reflect.Type, into map[string]bool) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t == reflect.TypeFor[time.Time]() {
		return
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); f.IsExported() && name != "" && name != "-" {
			into[name] = true
			configKeys(f.Type, into)
		}
	}
}
