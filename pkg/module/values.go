package module

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/addon-operator/addon-operator/pkg/filelimit"
	"github.com/addon-operator/addon-operator/pkg/values"
)

const (
	valuesFileName = "values.yaml"
	globalKey      = "global"
	enabledSuffix  = "Enabled"
)

// valuesFile is the parsed top level of one values.yaml.
type valuesFile struct {
	path string
	top  values.Values // nil when the file does not exist
}

// readValuesFile parses path as a YAML map. A missing file yields a
// valuesFile with a nil top; an empty file yields an empty one.
func readValuesFile(path string) (valuesFile, error) {
	data, err := filelimit.ReadFile(path, filelimit.Default)
	if errors.Is(err, fs.ErrNotExist) {
		return valuesFile{path: path}, nil
	}
	if err != nil {
		return valuesFile{}, loopError(path, err) // *fs.PathError names the file
	}
	top, err := values.FromYAML(data)
	if err != nil {
		return valuesFile{}, fmt.Errorf("parse values file %q: %w", path, err)
	}
	return valuesFile{path: path, top: top}, nil
}

// section returns the map under key, or nil when the key is absent or null.
func (f valuesFile) section(key string) (values.Values, error) {
	v, ok := f.top[key]
	if !ok || v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("values file %q: key %q: want a map, got %s", f.path, key, values.KindOf(v))
	}
	return values.Values(m), nil
}

// enabled returns <key>Enabled, or nil when absent.
func (f valuesFile) enabled(key string) (*bool, error) {
	name := key + enabledSuffix
	v, ok := f.top[name]
	if !ok {
		return nil, nil
	}
	b, ok := v.(bool)
	if !ok {
		return nil, fmt.Errorf("values file %q: key %q: want a boolean, got %s", f.path, name, values.KindOf(v))
	}
	return &b, nil
}

// commonValues is what the modules dirs' values.yaml files hold, in dir order.
type commonValues []valuesFile

// readCommonValues reads values.yaml of every modules dir; missing files are
// skipped.
func readCommonValues(dirs []string) (commonValues, error) {
	var files commonValues
	for _, dir := range dirs {
		f, err := readValuesFile(filepath.Join(dir, valuesFileName))
		if err != nil {
			return nil, err
		}
		if f.top != nil {
			files = append(files, f)
		}
	}
	return files, nil
}

// section merges the key section of every file with values.Merge, a later
// file overriding an earlier one; nil when no file has it.
func (c commonValues) section(key string) (values.Values, error) {
	var merged values.Values
	for _, f := range c {
		s, err := f.section(key)
		if err != nil {
			return nil, err
		}
		if s != nil {
			merged = values.Merge(merged, s)
		}
	}
	return merged, nil
}

// enabled returns the <key>Enabled flag of the last file that sets it.
func (c commonValues) enabled(key string) (*bool, error) {
	var last *bool
	for _, f := range c {
		b, err := f.enabled(key)
		if err != nil {
			return nil, err
		}
		if b != nil {
			last = b
		}
	}
	return last, nil
}

// copyValues deep-copies a values tree; nil stays nil.
func copyValues(v values.Values) values.Values {
	if v == nil {
		return nil
	}
	return v.DeepCopy()
}

func copyBool(b *bool) *bool {
	if b == nil {
		return nil
	}
	c := *b
	return &c
}
