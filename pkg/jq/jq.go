// Package jq compiles jq filters and prepares Kubernetes objects' JSON
// values as their input, so that hook configs, monitors and the object
// patcher all accept and run the same filters.
package jq

import "github.com/itchyny/gojq"

// Compile parses and compiles filter. Its import and include directives
// find jq modules in the directories of JQ_LIBRARY_PATH (see
// LibraryPaths).
func Compile(filter string) (*gojq.Code, error) {
	return compile(filter, LibraryPaths())
}

func compile(filter string, libraryPaths []string) (*gojq.Code, error) {
	q, err := gojq.Parse(filter)
	if err != nil {
		return nil, err
	}
	if len(libraryPaths) == 0 {
		return gojq.Compile(q)
	}
	return gojq.Compile(q, gojq.WithModuleLoader(gojq.NewModuleLoader(libraryPaths)))
}

// Input copies a decoded JSON or unstructured value into the types gojq
// accepts: integers become int, which gojq keeps exact (the reference
// implementation went through float64), and float32 becomes float64.
func Input(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = Input(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = Input(x)
		}
		return out
	case int64:
		return int(v)
	case int32:
		return int(v)
	case float32:
		return float64(v)
	default:
		return v
	}
}
