package config

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"
)

// PositionError is a configuration error at a place in the file.
type PositionError struct {
	File      string
	Line, Col int
	Path      string // where in the document, e.g. hosts[0].port; "" at the top
	Msg       string
}

func (e *PositionError) Error() string {
	where := ""
	if e.Path != "" {
		where = " (at " + e.Path + ")"
	}
	return fmt.Sprintf("config %s:%d:%d: %s%s", e.File, e.Line, e.Col, e.Msg, where)
}

// lineCol turns a byte offset of b into a 1-based line and column.
func lineCol(b []byte, off int64) (int, int) {
	if off > int64(len(b)) {
		off = int64(len(b))
	}
	if off < 0 {
		off = 0
	}
	before := b[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(off) - bytes.LastIndexByte(before, '\n')
	return line, col
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// checkKeys walks the JSON document b against the type t and returns the
// first key that t does not have (matched exactly: encoding/json would
// also take "Tokens" for "tokens") or the first syntax error, with its line
// and column. Type mismatches are left to the decoder, which reports them
// with an offset too.
func checkKeys(file string, b []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	w := keyWalker{file: file, b: b, dec: dec}
	if err := w.value(t, ""); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return w.at(dec.InputOffset(), "", "unexpected data after the configuration object")
	}
	return nil
}

type keyWalker struct {
	file string
	b    []byte
	dec  *json.Decoder
}

func (w *keyWalker) at(off int64, path, format string, a ...any) error {
	line, col := lineCol(w.b, off)
	return &PositionError{File: w.file, Line: line, Col: col, Path: path, Msg: fmt.Sprintf(format, a...)}
}

func (w *keyWalker) token(path string) (json.Token, error) {
	tok, err := w.dec.Token()
	if err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, w.at(se.Offset, path, "%v", err)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, w.at(int64(len(w.b)), path, "unexpected EOF: the document ends before its last value does")
		}
		return nil, w.at(w.dec.InputOffset(), path, "%v", err)
	}
	return tok, nil
}

// skip consumes one value whose first token is tok.
func (w *keyWalker) skip(tok json.Token, path string) error {
	d, ok := tok.(json.Delim)
	if !ok || d == '}' || d == ']' {
		return nil
	}
	depth := 1
	for depth > 0 {
		t, err := w.token(path)
		if err != nil {
			return err
		}
		if d, ok := t.(json.Delim); ok {
			if d == '{' || d == '[' {
				depth++
			} else {
				depth--
			}
		}
	}
	return nil
}

func (w *keyWalker) value(t reflect.Type, path string) error {
	tok, err := w.token(path)
	if err != nil {
		return err
	}
	return w.valueFrom(tok, t, path)
}

func (w *keyWalker) valueFrom(tok json.Token, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler) {
		if _, isDelim := tok.(json.Delim); isDelim {
			return w.skip(tok, path)
		}
		// A scalar of a type with its own parser (a duration, a mode, a
		// time): parse it here, where its position is known.
		raw, _ := json.Marshal(tok)
		if n, ok := tok.(json.Number); ok {
			raw = []byte(n)
		}
		off := w.dec.InputOffset() - int64(len(raw))
		if err := json.Unmarshal(raw, reflect.New(t).Interface()); err != nil {
			line, col := lineCol(w.b, off)
			return &PositionError{File: w.file, Line: line, Col: col, Msg: fmt.Sprintf("%s: %v", orTop(path), err)}
		}
		return nil
	}
	d, isDelim := tok.(json.Delim)
	switch {
	case t.Kind() == reflect.Struct && isDelim && d == '{':
		return w.object(path, func(key string, off int64) (reflect.Type, error) {
			if ft, ok := fieldByTag(t, key); ok {
				return ft, nil
			}
			msg := fmt.Sprintf("unknown field %q", key)
			if near := nearest(t, key); near != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", near)
			}
			return nil, w.at(off, path, "%s; known: %s", msg, strings.Join(fieldTags(t), ", "))
		})
	case t.Kind() == reflect.Map && isDelim && d == '{':
		return w.object(path, func(string, int64) (reflect.Type, error) { return t.Elem(), nil })
	case (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && isDelim && d == '[':
		for i := 0; ; i++ {
			p := fmt.Sprintf("%s[%d]", path, i)
			tok, err := w.token(p)
			if err != nil {
				return err
			}
			if d, ok := tok.(json.Delim); ok && d == ']' {
				return nil
			}
			if err := w.valueFrom(tok, t.Elem(), p); err != nil {
				return err
			}
		}
	}
	return w.skip(tok, path)
}

// object walks the members of an object whose '{' was read; typeOf gives
// each key's type or the error for a key that has none.
func (w *keyWalker) object(path string, typeOf func(key string, off int64) (reflect.Type, error)) error {
	for {
		tok, err := w.token(path)
		if err != nil {
			return err
		}
		if d, ok := tok.(json.Delim); ok && d == '}' {
			return nil
		}
		key, _ := tok.(string)
		quoted, _ := json.Marshal(key)
		off := w.dec.InputOffset() - int64(len(quoted))
		ft, err := typeOf(key, off)
		if err != nil {
			return err
		}
		p := key
		if path != "" {
			p = path + "." + key
		}
		if err := w.value(ft, p); err != nil {
			return err
		}
	}
}

func jsonName(f reflect.StructField) string {
	tag := f.Tag.Get("json")
	if tag == "-" {
		return ""
	}
	name, _, _ := strings.Cut(tag, ",")
	if name == "" {
		name = f.Name
	}
	return name
}

func fieldByTag(t reflect.Type, key string) (reflect.Type, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.IsExported() && jsonName(f) == key {
			return f.Type, true
		}
	}
	return nil, false
}

func fieldTags(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		if f := t.Field(i); f.IsExported() && jsonName(f) != "" {
			out = append(out, jsonName(f))
		}
	}
	sort.Strings(out)
	return out
}

// nearest returns the known key that differs from key only in case, in
// '-' for '_', or by one edit; "" if none.
func nearest(t reflect.Type, key string) string {
	norm := func(s string) string { return strings.ReplaceAll(strings.ToLower(s), "-", "_") }
	for _, k := range fieldTags(t) {
		if norm(k) == norm(key) || editDistance1(k, key) {
			return k
		}
	}
	return ""
}

// editDistance1 reports whether a and b differ by exactly one insertion,
// deletion or substitution.
func editDistance1(a, b string) bool {
	if len(a) < len(b) {
		a, b = b, a
	}
	if len(a)-len(b) > 1 || a == b {
		return false
	}
	i := 0
	for i < len(b) && a[i] == b[i] {
		i++
	}
	if len(a) == len(b) {
		return a[i+1:] == b[i+1:]
	}
	return a[i+1:] == b[i:]
}

// decodeError gives a decoder error its line and column.
func decodeError(file string, b []byte, err error) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		line, col := lineCol(b, te.Offset)
		path := te.Field
		return &PositionError{File: file, Line: line, Col: col,
			Msg: fmt.Sprintf("%s is %s, want %s", orTop(path), te.Value, te.Type)}
	case errors.As(err, &se):
		line, col := lineCol(b, se.Offset)
		return &PositionError{File: file, Line: line, Col: col, Msg: se.Error()}
	}
	return fmt.Errorf("config %s: %w", file, err)
}

func orTop(path string) string {
	if path == "" {
		return "the document"
	}
	return path
}
