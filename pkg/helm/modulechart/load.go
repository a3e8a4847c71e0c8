package modulechart

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/ignore"
	"sigs.k8s.io/yaml"
)

// synthesisedVersion is the chart version of a module without Chart.yaml.
const synthesisedVersion = "0.1.0"

// globalKey is the top-level key of the values every chart and subchart
// shares (Helm's chartutil.GlobalKey).
const globalKey = chartutil.GlobalKey

// maxChartDepth bounds directory nesting, so a symlink loop fails instead
// of recursing forever.
const maxChartDepth = 32

// Load loads the chart of the module in dir for release name.
//
// A dir with Chart.yaml is loaded as Helm's own loader does, which honours
// .helmignore, but without hooks/ (see loadChartDir). Without Chart.yaml
// the chart is synthesised: name = release name, version 0.1.0, apiVersion
// v2, files = the module dir minus what belongs to the operator (see
// operatorOwned), hidden entries and .helmignore matches.
//
// In both cases the chart's default values lose every top-level key that
// values (the operator's effective values) carries, except global. The
// module's values.yaml holds the module's static values under <moduleKey>:,
// which the operator has already merged, with its schema defaults, config
// and hook patches, into values; were they also chart defaults, Helm would
// coalesce them back in and, for example, resurrect a key a hook removed.
// The chart's global: is not the operator's (the operator's globals come
// from modules/values.yaml, the ConfigMap and global hooks): it stays the
// chart's defaults, under the operator's globals, and Helm coalesces the
// two as it coalesces any values file over a chart's values.yaml, subcharts
// included. Other top-level keys (the chart's own settings, settings for
// subcharts) stay chart defaults, as they always were.
func Load(name, dir string, values map[string]any) (*chart.Chart, error) {
	var (
		ch  *chart.Chart
		err error
	)
	if _, statErr := os.Stat(filepath.Join(dir, "Chart.yaml")); statErr == nil {
		ch, err = loadChartDir(dir)
	} else {
		ch, err = synthesiseChart(name, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("load chart from %s: %w", dir, err)
	}
	for key := range values {
		if key != globalKey {
			delete(ch.Values, key)
		}
	}
	return ch, nil
}

// operatorOwned reports whether a top-level entry of a module dir belongs
// to the operator rather than to the chart.
func operatorOwned(name string, isDir bool) bool {
	if !isDir {
		return name == "enabled"
	}
	switch name {
	case "crds", "docs", "hooks", "images", "lib", "openapi":
		return true
	}
	return false
}

func synthesiseChart(name, dir string) (*chart.Chart, error) {
	meta, err := yaml.Marshal(&chart.Metadata{APIVersion: chart.APIVersionV2, Name: name, Version: synthesisedVersion})
	if err != nil {
		return nil, fmt.Errorf("encode chart metadata: %w", err)
	}
	rules, err := ignoreRules(dir)
	if err != nil {
		return nil, err
	}
	files := []*loader.BufferedFile{{Name: "Chart.yaml", Data: meta}}
	if err := collectFiles(dir, "", rules, &files); err != nil {
		return nil, err
	}
	return loader.LoadFiles(files)
}

func ignoreRules(dir string) (*ignore.Rules, error) {
	rules := ignore.Empty()
	file := filepath.Join(dir, ignore.HelmIgnore)
	if _, err := os.Stat(file); err == nil {
		if rules, err = ignore.ParseFile(file); err != nil {
			return nil, fmt.Errorf("parse %s: %w", file, err)
		}
	}
	rules.AddDefaults()
	return rules, nil
}

// collectFiles appends the chart files under root/rel, following symlinks.
func collectFiles(root, rel string, rules *ignore.Rules, files *[]*loader.BufferedFile) error {
	if strings.Count(rel, "/") >= maxChartDepth {
		return fmt.Errorf("directory %s nested too deep (symlink loop?)", rel)
	}
	entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		return fmt.Errorf("read module dir: %w", err)
	}
	for _, entry := range entries {
		name := path.Join(rel, entry.Name())
		if strings.HasPrefix(entry.Name(), ".") {
			continue
		}
		full := filepath.Join(root, filepath.FromSlash(name))
		info, err := os.Stat(full)
		if errors.Is(err, fs.ErrNotExist) {
			continue // a broken symlink
		}
		if err != nil {
			return fmt.Errorf("stat %s: %w", name, err)
		}
		if (rel == "" && operatorOwned(entry.Name(), info.IsDir())) || rules.Ignore(name, info) {
			continue
		}
		if info.IsDir() {
			if err := collectFiles(root, name, rules, files); err != nil {
				return err
			}
			continue
		}
		if !info.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file", name)
		}
		data, err := os.ReadFile(full)
		if err != nil {
			return fmt.Errorf("read %s: %w", name, err)
		}
		*files = append(*files, &loader.BufferedFile{Name: name, Data: bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))})
	}
	return nil
}
