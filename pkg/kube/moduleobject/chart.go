package moduleobject

import (
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"
)

// ChartVersion returns the version in dir/Chart.yaml, "" when it cannot be
// read (the release itself reports a broken chart).
func ChartVersion(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "Chart.yaml"))
	if err != nil {
		return ""
	}
	var c struct {
		Version string `json:"version"`
	}
	if yaml.Unmarshal(b, &c) != nil {
		return ""
	}
	return c.Version
}
