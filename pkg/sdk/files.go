package sdk

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
)

// readInputs decodes the files named by BINDING_CONTEXT_PATH, VALUES_PATH
// and CONFIG_VALUES_PATH; an unset variable or an empty file leaves the
// input empty.
func readInputs(getenv func(string) string, in *Input) error {
	for _, f := range []struct {
		env string
		dst any
	}{
		{"BINDING_CONTEXT_PATH", &in.Contexts},
		{"VALUES_PATH", &in.Values},
		{"CONFIG_VALUES_PATH", &in.ConfigValues},
	} {
		path := getenv(f.env)
		if path == "" {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("read %s: %w", f.env, err)
		}
		if len(bytes.TrimSpace(data)) == 0 {
			continue
		}
		if err := json.Unmarshal(data, f.dst); err != nil {
			return fmt.Errorf("decode %s: %w", f.env, err)
		}
	}
	return nil
}

// writeOutputs appends the recorded operations, one JSON document a line,
// to the files named by the output variables. Nothing is written for an
// output without operations; an unset variable with operations is an
// error, so that no output is lost silently.
func writeOutputs(getenv func(string) string, in *Input) error {
	for _, f := range []struct {
		env  string
		docs []any
	}{
		{"VALUES_JSON_PATCH_PATH", anys(in.ValuesPatch.ops)},
		{"CONFIG_VALUES_JSON_PATCH_PATH", anys(in.ConfigValuesPatch.ops)},
		{"KUBERNETES_PATCH_PATH", anys(in.Objects.ops)},
		{"METRICS_PATH", anys(in.Metrics.ops)},
	} {
		if len(f.docs) == 0 {
			continue
		}
		path := getenv(f.env)
		if path == "" {
			return fmt.Errorf("write %s: variable not set", f.env)
		}
		if err := appendLines(path, f.docs); err != nil {
			return fmt.Errorf("write %s: %w", f.env, err)
		}
	}
	return nil
}

func anys[T any](s []T) []any {
	out := make([]any, len(s))
	for i := range s {
		out[i] = s[i]
	}
	return out
}

func appendLines(path string, docs []any) (err error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for _, d := range docs {
		if err := enc.Encode(d); err != nil {
			return err
		}
	}
	return w.Flush()
}
