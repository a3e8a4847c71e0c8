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
	"helm.sh/helm/v3/pkg/ignore"
)

// hooksDir is the module directory of the operator's hooks. It is never a
// part of the chart: it holds executables (a module SDK binary is tens of
// megabytes, above Helm's limit for one chart file) and Python virtual
// environments, which Helm would otherwise read into memory as chart files
// on every render.
const hooksDir = "hooks"

// loadChartDir loads a module dir that has a Chart.yaml as Helm's
// loader.LoadDir does (the .helmignore and Helm's default rules, symlinks
// followed, the per-file size limit, a leading byte order mark dropped),
// except that the top-level hooks/ directory is skipped without a
// .helmignore saying so.
func loadChartDir(dir string) (*chart.Chart, error) {
	rules, err := ignoreRules(dir)
	if err != nil {
		return nil, err
	}
	var files []*loader.BufferedFile
	if err := walkChartDir(dir, "", rules, &files); err != nil {
		return nil, err
	}
	return loader.LoadFiles(files)
}

// walkChartDir appends the chart files under root/rel in lexical order.
func walkChartDir(root, rel string, rules *ignore.Rules, files *[]*loader.BufferedFile) error {
	if strings.Count(rel, "/") >= maxChartDepth {
		return fmt.Errorf("directory %s nested too deep (symlink loop?)", rel)
	}
	entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		return fmt.Errorf("read chart dir: %w", err)
	}
	for _, entry := range entries {
		name := path.Join(rel, entry.Name())
		full := filepath.Join(root, filepath.FromSlash(name))
		info, err := os.Stat(full)
		if errors.Is(err, fs.ErrNotExist) {
			continue // a broken symlink
		}
		if err != nil {
			return fmt.Errorf("stat %s: %w", name, err)
		}
		if rel == "" && info.IsDir() && entry.Name() == hooksDir {
			continue
		}
		if rules.Ignore(name, info) {
			continue
		}
		if info.IsDir() {
			if err := walkChartDir(root, name, rules, files); err != nil {
				return err
			}
			continue
		}
		if !info.Mode().IsRegular() {
			return fmt.Errorf("cannot load irregular file %s as it has file mode type bits set", name)
		}
		if info.Size() > loader.MaxDecompressedFileSize {
			return fmt.Errorf("chart file %q is larger than the maximum file size %d", name, loader.MaxDecompressedFileSize)
		}
		data, err := os.ReadFile(full)
		if err != nil {
			return fmt.Errorf("read %s: %w", name, err)
		}
		*files = append(*files, &loader.BufferedFile{Name: name, Data: bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))})
	}
	return nil
}
