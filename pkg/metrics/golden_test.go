package metrics

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
)

//nolint:gochecknoglobals // a test flag must be registered at package init; it is only read
var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// compareGolden compares what g gathers (only the named metrics, when
// names are given) with the exposition text in testdata/file, or rewrites
// the file under -update.
func compareGolden(t *testing.T, g prometheus.Gatherer, file string, names ...string) {
	t.Helper()
	path := filepath.Join("testdata", file)
	if *update {
		if err := os.WriteFile(path, format(t, g, names...), 0o600); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.Open(filepath.Clean(path))
	if err != nil {
		t.Fatalf("open golden file (run with -update to create it): %v", err)
	}
	defer func() { _ = want.Close() }()
	if err := testutil.GatherAndCompare(g, want, names...); err != nil {
		t.Errorf("%s: %v", path, err)
	}
}

// format renders what g gathers (only the named metrics, when names are
// given) as exposition text.
func format(t *testing.T, g prometheus.Gatherer, names ...string) []byte {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if len(names) > 0 && !slices.Contains(names, mf.GetName()) {
			continue
		}
		if err := enc.Encode(mf); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}
