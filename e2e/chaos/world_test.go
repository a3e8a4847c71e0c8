package chaos

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
)

// moduleDirs are the fixture's module directories: three order groups of
// two, so Helm operations also run side by side. A name is one word, so the
// module's values key is its name too.
func moduleDirs() []string {
	return []string{"010-ant", "010-bee", "020-cat", "020-dog", "030-eel", "030-fox"}
}

// moduleNames returns the modules' names, sorted.
func moduleNames() []string {
	dirs := moduleDirs()
	names := make([]string, 0, len(dirs))
	for _, d := range dirs {
		_, name, _ := strings.Cut(d, "-")
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// fixture is the modules dir every world's operator runs: each module is
// a copy of testdata/module with values.yaml naming its key.
type fixture struct {
	dir string // modules/, global-hooks/
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir := t.TempDir()
	enabled := make([]string, 0, 1+len(moduleDirs()))
	enabled = append(enabled, "global:\n  generation: 0\n")
	for _, d := range moduleDirs() {
		_, name, _ := strings.Cut(d, "-")
		moduleDir := filepath.Join(dir, "modules", d)
		if err := os.CopyFS(moduleDir, os.DirFS("testdata/module")); err != nil {
			t.Fatalf("copy module %s: %v", d, err)
		}
		values := fmt.Sprintf("%s:\n  counter: 0\n", name)
		if err := os.WriteFile(filepath.Join(moduleDir, "values.yaml"), []byte(values), 0o600); err != nil {
			t.Fatal(err)
		}
		enabled = append(enabled, name+"Enabled: true\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "modules", "values.yaml"), []byte(strings.Join(enabled, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "global-hooks"), 0o750); err != nil {
		t.Fatal(err)
	}
	return &fixture{dir: dir}
}

// world is one namespace the operator manages: the users' ConfigMap with
// the generation every module renders, and the counters of the modules'
// beforeHelm hooks.
type world struct {
	*operatortest.Harness
	fixture    *fixture
	stateDir   string
	logFile    *os.File // every run's output
	generation int
}

func (f *fixture) newWorld(t *testing.T, logFile *os.File) *world {
	t.Helper()
	w := &world{Harness: operatortest.New(t, cp, bin), fixture: f, stateDir: t.TempDir(), logFile: logFile}
	w.bumpGeneration()
	return w
}

// bumpGeneration changes the global section of the users' ConfigMap, which
// changes every module's values.
func (w *world) bumpGeneration() {
	w.T.Helper()
	w.generation++
	w.SetConfig(map[string]string{"global": fmt.Sprintf("generation: %d\n", w.generation)})
}

// startOperator runs the binary for w's namespace with short retry delays,
// its output appended to w's log file. A cleanup kills it, as the kill loop
// does.
func (w *world) startOperator() *operatortest.Operator {
	w.T.Helper()
	op := w.Start(operatortest.Options{
		ModulesDir:     filepath.Join(w.fixture.dir, "modules"),
		GlobalHooksDir: filepath.Join(w.fixture.dir, "global-hooks"),
		Args:           []string{"--retry-delay=100ms", "--retry-max-delay=1s"},
		Env:            append(os.Environ(), "CHAOS_STATE_DIR="+w.stateDir),
		Output:         w.logFile,
	})
	w.T.Cleanup(op.Kill)
	return op
}

// message returns a matcher for log lines with message msg.
func message(msg string) func(operatortest.Line) bool {
	return func(l operatortest.Line) bool { return l.Msg == msg }
}

// counter returns how often module's beforeHelm hook ran in this world: the
// counter its last run patched into the values.
func (w *world) counter(module string) string {
	w.T.Helper()
	data, err := os.ReadFile(filepath.Join(w.stateDir, module))
	if err != nil {
		w.T.Fatalf("read %s's counter: %v", module, err)
	}
	return strings.TrimSpace(string(data))
}

// expectedObjects lists what the modules render at the current generation,
// as inventory entries (see inventory).
func (w *world) expectedObjects() []string {
	want := make([]string, 0, 4*len(moduleDirs()))
	gen := strconv.Itoa(w.generation)
	for _, m := range moduleNames() {
		want = append(want,
			"ConfigMap/"+m+" ("+m+")",
			"ConfigMap/"+m+"-gen-"+gen+" ("+m+")",
			"ConfigMap/"+m+"-hook ("+m+")",
			"Secret/"+m+" ("+m+")",
		)
	}
	slices.Sort(want)
	return want
}

// staleModules returns the modules whose ConfigMap does not carry the
// current generation and the counter of the module's last hook run yet.
func (w *world) staleModules() ([]string, error) {
	var stale []string
	for _, m := range moduleNames() {
		cm, err := w.Client.CoreV1().ConfigMaps(w.Namespace).Get(w.T.Context(), m, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			stale = append(stale, m+": no ConfigMap")
			continue
		}
		if err != nil {
			return nil, err
		}
		want := map[string]string{"generation": strconv.Itoa(w.generation), "counter": w.counter(m)}
		if cm.Data["generation"] != want["generation"] || cm.Data["counter"] != want["counter"] {
			stale = append(stale, fmt.Sprintf("%s: %v, want %v", m, cm.Data, want))
		}
	}
	return stale, nil
}
