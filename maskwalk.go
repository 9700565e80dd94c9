package rigout

import (
	"encoding"
	"encoding/json"
	"reflect"

	"github.com/rigout/rigout/redact"
)

// maskWalkDepth bounds how deep maskClean looks before it gives up.
const maskWalkDepth = 32

var (
	jsonMarshalerType = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// maskClean reports whether v, a structuredContent value, certainly holds
// nothing set would mask: every string in it (map keys included) is left
// unchanged by set.Redact. It answers false when it cannot tell — a value
// that marshals itself, bytes (base64 in JSON), a kind JSON cannot encode,
// nesting deeper than maskWalkDepth — and then the caller masks through
// the value's JSON encoding as before. Checking the strings where they are
// spares the encoding of every large result (a command's capped output)
// that holds no secret, the common case: it is neither encoded nor copied.
func maskClean(set *redact.Set, v any) bool {
	return stringsClean(set, reflect.ValueOf(v), 0)
}

func stringsClean(set *redact.Set, v reflect.Value, depth int) bool {
	if !v.IsValid() {
		return true // nil
	}
	if depth > maskWalkDepth {
		return false
	}
	t := v.Type()
	if t.Implements(jsonMarshalerType) || t.Implements(textMarshalerType) ||
		reflect.PointerTo(t).Implements(jsonMarshalerType) || reflect.PointerTo(t).Implements(textMarshalerType) {
		return false
	}
	switch v.Kind() {
	case reflect.String:
		s := v.String()
		return set.Redact(s) == s
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return true
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return true
		}
		return stringsClean(set, v.Elem(), depth+1)
	case reflect.Struct:
		for i := range t.NumField() {
			if !t.Field(i).IsExported() {
				continue // JSON leaves it out too
			}
			if !stringsClean(set, v.Field(i), depth+1) {
				return false
			}
		}
		return true
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return false
		}
		for i := range v.Len() {
			if !stringsClean(set, v.Index(i), depth+1) {
				return false
			}
		}
		return true
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return false
		}
		it := v.MapRange()
		for it.Next() {
			if !stringsClean(set, it.Key(), depth+1) || !stringsClean(set, it.Value(), depth+1) {
				return false
			}
		}
		return true
	}
	return false // channels, functions, complex numbers: let JSON decide
}
