package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/client-go/util/jsonpath"
	"sigs.k8s.io/yaml"
)

// The flags every command spells and means alike (docs/cli.md,
// "Conventions"); TestFlagConventions holds every command to them.
const (
	kubeconfigUsage = "kubeconfig file"
	contextUsage    = "kubeconfig context"
	// namespaceUsagePrefix starts the help of every -n/--namespace.
	namespaceUsagePrefix = "the operator's namespace"
	// outputFormats are the formats of every -o/--output.
	outputFormats = "text, json, yaml, name or jsonpath=<expr>"
)

// namespaceUsage is the help of -n/--namespace; def says what applies
// without it and without ADDON_OPERATOR_NAMESPACE.
func namespaceUsage(def string) string {
	return namespaceUsagePrefix + " (env ADDON_OPERATOR_NAMESPACE; " + def + ")"
}

// outputUsage is the help of -o/--output; extra names formats a command
// has besides the common ones.
func outputUsage(extra ...string) string {
	if len(extra) > 0 {
		return "output format: " + strings.Join(extra, ", ") + ", " + outputFormats
	}
	return "output format: " + outputFormats
}

// oldSpellings are former flag names, each kept as a hidden, deprecated
// alias of the conventional name.
var oldSpellings = map[string]string{ //nolint:gochecknoglobals // a table read by bind and by the conventions test
	"kube-config":        "kubeconfig",
	"kube-context":       "context",
	"operator-namespace": "namespace",
}

// aliasFlag registers old as a hidden, deprecated spelling of the flag
// name, which must be registered: setting old sets name (and marks it
// given, so the environment does not override it).
func aliasFlag(fs *pflag.FlagSet, old, name string) {
	target := fs.Lookup(name)
	f := fs.VarPF(&aliasValue{fs: fs, name: name}, old, "", "former spelling of --"+name)
	f.NoOptDefVal = target.NoOptDefVal
	_ = fs.MarkDeprecated(old, "use --"+name) // also hides it
}

// aliasValue forwards to the flag it is an alias of.
type aliasValue struct {
	fs   *pflag.FlagSet
	name string
}

func (a *aliasValue) Set(v string) error { return a.fs.Set(a.name, v) }
func (a *aliasValue) String() string     { return a.fs.Lookup(a.name).Value.String() }
func (a *aliasValue) Type() string       { return a.fs.Lookup(a.name).Value.Type() }

// checkOutput checks an -o value: one of the common formats or extra.
func checkOutput(format string, extra ...string) error {
	switch {
	case format == "text", format == "json", format == "yaml", format == "name":
		return nil
	case strings.HasPrefix(format, "jsonpath="):
		_, err := parseJSONPath(strings.TrimPrefix(format, "jsonpath="))
		return err
	}
	for _, e := range extra {
		if format == e {
			return nil
		}
	}
	return fmt.Errorf("--output %q: want %s", format, strings.Join(append(extra, outputFormats), ", "))
}

// parseJSONPath parses a kubectl-style JSONPath template; an expression
// without braces is taken as one, as kubectl does: .items[*].name.
func parseJSONPath(expr string) (*jsonpath.JSONPath, error) {
	if expr == "" {
		return nil, errors.New("--output jsonpath=: the expression is empty")
	}
	if !strings.Contains(expr, "{") {
		expr = "{" + expr + "}"
	}
	jp := jsonpath.New("output")
	if err := jp.Parse(expr); err != nil {
		return nil, fmt.Errorf("--output jsonpath=%s: %w", expr, err)
	}
	return jp, nil
}

// writeOutput writes v as asked: JSON, YAML, the names of its items, a
// JSONPath template over its JSON form, or as text through text (JSON when
// nil).
func writeOutput(w io.Writer, format string, v any, text func(io.Writer) error) error {
	switch {
	case format == "yaml":
		out, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(out)
		return err
	case format == "name":
		return writeNames(w, v)
	case strings.HasPrefix(format, "jsonpath="):
		jp, err := parseJSONPath(strings.TrimPrefix(format, "jsonpath="))
		if err != nil {
			return err
		}
		data, err := generic(v)
		if err != nil {
			return err
		}
		var b strings.Builder
		if err := jp.Execute(&b, data); err != nil {
			return fmt.Errorf("--output %s: %w", format, err)
		}
		out := b.String()
		if !strings.HasSuffix(out, "\n") {
			out += "\n" // a line, as the shell expects; a template ending in one keeps it
		}
		_, err = io.WriteString(w, out)
		return err
	case format == "json" || text == nil:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	default:
		return text(w)
	}
}

// generic returns v's JSON form as maps, slices and scalars.
func generic(v any) (any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	err = json.Unmarshal(raw, &out)
	return out, err
}

// writeNames prints one name a line: of each item of a list (the items
// of a v1 List), or of v itself. A Kubernetes object's name is
// kind/name, as kubectl prints it; other items are named by their name,
// module or object field.
func writeNames(w io.Writer, v any) error {
	data, err := generic(v)
	if err != nil {
		return err
	}
	items, ok := data.([]any)
	if !ok {
		if m, isMap := data.(map[string]any); isMap && m["kind"] == "List" {
			items, _ = m["items"].([]any)
		} else {
			items = []any{data}
		}
	}
	for _, item := range items {
		name := nameOf(item)
		if name == "" {
			return errors.New("--output name: this output has no names; use json, yaml or jsonpath=<expr>")
		}
		if _, err := fmt.Fprintln(w, name); err != nil {
			return err
		}
	}
	return nil
}

func nameOf(item any) string {
	m, ok := item.(map[string]any)
	if !ok {
		return ""
	}
	if meta, ok := m["metadata"].(map[string]any); ok {
		kind, _ := m["kind"].(string)
		name, _ := meta["name"].(string)
		if kind != "" && name != "" {
			return strings.ToLower(kind) + "/" + name
		}
	}
	for _, key := range []string{"name", "module", "object"} {
		if s, ok := m[key].(string); ok && s != "" {
			return s
		}
	}
	return ""
}
