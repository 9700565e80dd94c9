package rigout

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// emptyObjectSchema is the input schema of a tool that takes no arguments.
var emptyObjectSchema = json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)

// argSchema is one tool's compiled input schema.
type argSchema struct {
	schema  *jsonschema.Schema
	printer *message.Printer
}

// compileSchema compiles a tool's JSON Schema. The schema must describe an
// object, as MCP requires of tool inputs and outputs.
func compileSchema(tool, which string, raw json.RawMessage) (*argSchema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("rigout: tool %s: %s schema is not JSON: %w", tool, which, err)
	}
	if m, ok := doc.(map[string]any); !ok || m["type"] != "object" {
		return nil, fmt.Errorf("rigout: tool %s: %s schema must have \"type\": \"object\"", tool, which)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	url := "mem://rigout/" + tool + "/" + which + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("rigout: tool %s: %s schema: %w", tool, which, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("rigout: tool %s: %s schema: %w", tool, which, err)
	}
	return &argSchema{schema: s, printer: message.NewPrinter(language.English)}, nil
}

// ArgumentError reports arguments that do not satisfy a tool's input
// schema. Problems name the argument at fault, for example
// "timeout: got string, want integer".
type ArgumentError struct {
	Tool     string
	Problems []string
}

func (e *ArgumentError) Error() string {
	return fmt.Sprintf("invalid arguments for %s: %s", e.Tool, strings.Join(e.Problems, "; "))
}

// check validates arguments as encoding/json decodes them (numbers as
// float64), or as an in-process client passes them (Go ints and slices).
func (s *argSchema) check(tool string, args map[string]any) error {
	err := s.schema.Validate(args)
	if err == nil {
		return nil
	}
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return &ArgumentError{Tool: tool, Problems: []string{err.Error()}}
	}
	var problems []string
	s.leaves(verr, &problems)
	sort.Strings(problems)
	problems = compactStrings(problems)
	if len(problems) == 0 {
		problems = []string{verr.Error()}
	}
	return &ArgumentError{Tool: tool, Problems: problems}
}

// leaves collects one message per leaf of the validation error tree, each
// prefixed by the argument it is about.
func (s *argSchema) leaves(verr *jsonschema.ValidationError, out *[]string) {
	if len(verr.Causes) > 0 {
		for _, c := range verr.Causes {
			s.leaves(c, out)
		}
		return
	}
	where := strings.Join(verr.InstanceLocation, ".")
	msg := verr.ErrorKind.LocalizedString(s.printer)
	if where == "" {
		*out = append(*out, msg)
		return
	}
	*out = append(*out, where+": "+msg)
}

func compactStrings(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
