package configwatch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/utils/clock"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/metrics"
	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/status"
	"github.com/addon-operator/addon-operator/pkg/store"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// fakeConfigMapEvents records the ConfigMap Events asked for.
type fakeConfigMapEvents struct {
	mu     sync.Mutex
	events []string
}

func (f *fakeConfigMapEvents) add(e string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, e)
}

func (f *fakeConfigMapEvents) ConfigMapDeleted(kept bool) {
	f.add(fmt.Sprintf("deleted kept=%v", kept))
}
func (f *fakeConfigMapEvents) ConfigMapRecreated()         { f.add("recreated") }
func (f *fakeConfigMapEvents) ConfigHeld(reason, _ string) { f.add("held " + reason) }
func (f *fakeConfigMapEvents) ConfigRejected(keys []string, _ error) {
	f.add(fmt.Sprintf("rejected %v", keys))
}

// Events of a ConfigMap's life, as config.Source sends them.
func present(data map[string]string) config.Event {
	c, err := config.Parse(data)
	return config.Event{Config: c, Err: err, ResourceVersion: fmt.Sprint(len(data))}
}

func absent() config.Event {
	c, _ := config.Parse(nil)
	return config.Event{Config: c, Absent: true}
}

// observeCase is a sequence of ConfigMap events and what it leads to.
type observeCase struct {
	name string
	// emptyWhenMissing is --config-missing=empty.
	emptyWhenMissing bool
	events           []config.Event
	wantCfg          map[string]bool // Enabled of the config in force
	conds            []string
	emitted          []string
	logs             []string // level and message of the operator's config log lines
	errors           float64
	present          float64
	// saved is the configuration saved before the start; savedErr makes
	// it unreadable.
	saved    map[string]string
	savedErr bool
}

func observeCases() []observeCase {
	good := map[string]string{"aEnabled": "true", "global": "x: 1"}
	other := map[string]string{"aEnabled": "false"}
	bad := map[string]string{"aEnabled": "yes", "global": "x: 1"}
	return []observeCase{
		{
			name: "absent at first start is an empty config", events: []config.Event{absent()},
			wantCfg: map[string]bool{},
		},
		{
			name: "deleted while running keeps the last valid config, loudly once", events: []config.Event{present(good), absent(), absent()},
			wantCfg: map[string]bool{"a": true}, conds: []string{status.ConditionConfigMapMissing, status.ConditionConfigHeld},
			emitted: []string{"deleted kept=true", "held ConfigMapMissing"},
			logs:    []string{"WARN ConfigMap deleted, keeping the last valid configuration until it is recreated"},
		},
		{
			name: "recreated applies its content", events: []config.Event{present(good), absent(), present(other)},
			wantCfg: map[string]bool{"a": false}, emitted: []string{"deleted kept=true", "held ConfigMapMissing", "recreated"},
			logs: []string{
				"WARN ConfigMap deleted, keeping the last valid configuration until it is recreated",
				"INFO ConfigMap recreated, applying its content",
			},
			present: 1,
		},
		{
			name: "deleted with the empty policy applies an empty config", emptyWhenMissing: true,
			events:  []config.Event{present(good), absent()},
			wantCfg: map[string]bool{}, conds: []string{status.ConditionConfigMapMissing}, emitted: []string{"deleted kept=false"},
			logs: []string{"WARN ConfigMap deleted, applying an empty configuration"},
		},
		{
			name: "rejected content keeps the last valid config", events: []config.Event{present(good), present(bad)},
			wantCfg: map[string]bool{"a": true}, conds: []string{status.ConditionConfigMapInvalid},
			emitted: []string{"rejected [aEnabled]"}, logs: []string{"WARN ConfigMap is invalid, keeping the last valid one"},
			errors: 1, present: 1,
		},
		{
			name: "a valid content clears the rejection", events: []config.Event{present(good), present(bad), present(other)},
			wantCfg: map[string]bool{"a": false}, emitted: []string{"rejected [aEnabled]"},
			logs:   []string{"WARN ConfigMap is invalid, keeping the last valid one", "INFO ConfigMap is valid again"},
			errors: 1, present: 1,
		},
		{
			name: "deleting a rejected ConfigMap leaves only its absence", events: []config.Event{present(good), present(bad), absent()},
			wantCfg: map[string]bool{"a": true}, conds: []string{status.ConditionConfigMapMissing, status.ConditionConfigHeld},
			emitted: []string{"rejected [aEnabled]", "deleted kept=true", "held ConfigMapMissing"},
			logs: []string{
				"WARN ConfigMap is invalid, keeping the last valid one",
				"WARN ConfigMap deleted, keeping the last valid configuration until it is recreated",
			},
			errors: 1,
		},
		{
			name: "deleted before any content parsed is an empty config", events: []config.Event{present(bad), absent()},
			wantCfg: map[string]bool{}, emitted: []string{"rejected [aEnabled]"},
			logs: []string{"WARN ConfigMap is invalid, keeping the last valid one", "INFO ConfigMap is valid again"}, errors: 1,
		},
		{
			name: "rejected at first start", events: []config.Event{present(bad)},
			conds: []string{status.ConditionConfigMapInvalid}, emitted: []string{"rejected [aEnabled]"},
			logs: []string{"WARN ConfigMap is invalid, keeping the last valid one"}, errors: 1, present: 1,
		},
	}
}

// restartCases are observeCases of a start with a saved configuration.
func restartCases() []observeCase {
	good := map[string]string{"aEnabled": "true", "global": "x: 1"}
	other := map[string]string{"aEnabled": "false"}
	bad := map[string]string{"aEnabled": "yes", "global": "x: 1"}
	return []observeCase{
		{
			name: "absent at a restart holds the saved config", saved: good, events: []config.Event{absent()},
			wantCfg: map[string]bool{"a": true}, conds: []string{status.ConditionConfigHeld}, emitted: []string{"held ConfigMapMissing"},
		},
		{
			name: "absent at a restart with the empty policy is empty", saved: good, emptyWhenMissing: true,
			events: []config.Event{absent()}, wantCfg: map[string]bool{},
		},
		{
			name: "absent at a restart over an empty saved config is empty", saved: map[string]string{}, events: []config.Event{absent()},
			wantCfg: map[string]bool{},
		},
		{
			name: "absent at a restart over an unreadable saved config holds nothing", savedErr: true, events: []config.Event{absent()},
			conds: []string{status.ConditionConfigHeld}, emitted: []string{"held ConfigMapMissing"},
		},
		{
			name: "rejected at a restart holds the saved config", saved: good, events: []config.Event{present(bad)},
			wantCfg: map[string]bool{"a": true}, conds: []string{status.ConditionConfigHeld, status.ConditionConfigMapInvalid},
			emitted: []string{"rejected [aEnabled]", "held ConfigInvalid"},
			logs:    []string{"WARN ConfigMap is invalid, keeping the last valid one"}, errors: 1, present: 1,
		},
		{
			name: "recreated empty without confirmation holds", saved: good, events: []config.Event{absent(), present(map[string]string{})},
			wantCfg: map[string]bool{"a": true}, conds: []string{status.ConditionConfigHeld},
			emitted: []string{"held ConfigMapMissing", "held EmptyUnconfirmed"}, present: 1,
		},
		{
			name: "recreated empty with confirmation applies it", saved: good, events: []config.Event{absent(), confirmedEmpty()},
			wantCfg: map[string]bool{}, emitted: []string{"held ConfigMapMissing"}, present: 1,
		},
		{
			name: "a content at a restart applies over the saved config", saved: good, events: []config.Event{present(other)},
			wantCfg: map[string]bool{"a": false}, present: 1,
		},
		{
			name: "no ModuleConfigs at a restart hold the saved config", saved: good, events: []config.Event{noModuleConfigs()},
			wantCfg: map[string]bool{"a": true}, conds: []string{status.ConditionConfigHeld}, emitted: []string{"held NoModuleConfigs"},
		},
	}
}

func confirmedEmpty() config.Event {
	ev := present(map[string]string{})
	ev.Confirmed = true
	return ev
}

func noModuleConfigs() config.Event {
	ev := absent()
	ev.ModuleConfigs = true
	return ev
}

// fakeQueue stands for the main queue: it keeps the configuration to
// apply next, in place of one still waiting, and run puts it in force,
// recording with the health tracker what the main queue's applyConfig
// records for a configuration it accepts whole.
type fakeQueue struct {
	waiting *config.Config
	applied []*config.Config
}

func (q *fakeQueue) Apply(c *config.Config) { q.waiting = c }

// run handles the configuration waiting, as the main queue would.
func (q *fakeQueue) run(w *Watch) {
	if q.waiting == nil {
		return
	}
	q.applied = append(q.applied, q.waiting)
	q.waiting = nil
	if h := w.Health(); h.Held() == "" {
		h.Accept()
	}
}

func (q *fakeQueue) Start() {}

// inForce is the configuration the queue applied last; nil: none.
func (q *fakeQueue) inForce() *config.Config {
	if len(q.applied) == 0 {
		return nil
	}
	return q.applied[len(q.applied)-1]
}

// fakeSource is a configuration source whose events and writes come from
// the test.
type fakeSource struct {
	events chan config.Event
	// started receives each edit written; result answers it.
	started chan config.Edit
	result  chan error
}

func (s *fakeSource) Run(ctx context.Context) error { <-ctx.Done(); return nil }

func (s *fakeSource) Events() <-chan config.Event { return s.events }

func (s *fakeSource) Write(_ context.Context, e config.Edit) error {
	s.started <- e
	return <-s.result
}

// chanQueue passes what the watch hands the main queue to the test.
type chanQueue chan string

func (q chanQueue) Apply(c *config.Config) { q <- fmt.Sprint("apply ", c.Enabled) }
func (q chanQueue) Start()                 { q <- "start" }

// savedConfig is a LastApplied holding c.
type savedConfig struct{ c *config.Config }

func (s savedConfig) Load(context.Context) (*config.Config, error) { return s.c, nil }
func (savedConfig) Save(context.Context, *config.Config) error     { return nil }
func (savedConfig) Name() string                                   { return "saved" }

// TestRunStartsOnceWithTheSavedConfiguration: Run reads the saved
// configuration before the first event, which it holds for a missing
// source, and starts the startup sequence after the first event only.
func TestRunStartsOnceWithTheSavedConfiguration(t *testing.T) {
	src := &fakeSource{events: make(chan config.Event)}
	q := make(chanQueue, 10)
	w := New(Options{
		Source: src, Queue: q, LastApplied: savedConfig{mustParse(t, map[string]string{"aEnabled": "true"})},
		Namespace: "ns", ConfigMap: config.DefaultName, Clock: clock.RealClock{}, Logger: slog.New(slog.DiscardHandler),
	})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	src.events <- absent()
	src.events <- present(map[string]string{"aEnabled": "false"})
	src.events <- present(map[string]string{"aEnabled": "true"})
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run() = %v, want nil", err)
	}
	close(q)
	var got []string
	for s := range q {
		got = append(got, s)
	}
	want := []string{"apply map[a:true]", "start", "apply map[a:false]", "apply map[a:true]"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("handed to the main queue (-want +got):\n%s", diff)
	}
}

func TestObserveConfig(t *testing.T) {
	for _, tt := range append(observeCases(), restartCases()...) {
		t.Run(tt.name, func(t *testing.T) {
			var buf syncBuffer
			ev := &fakeConfigMapEvents{}
			q := &fakeQueue{}
			w := New(Options{
				Source: &fakeSource{}, Queue: q, ConfigMapEvents: ev, Recorder: metrics.NewRecorder(),
				Namespace: "ns", ConfigMap: config.DefaultName, EmptyWhenMissing: tt.emptyWhenMissing,
				Clock: clock.RealClock{}, Logger: slog.New(slog.NewJSONHandler(&buf, nil)),
			})
			if tt.saved != nil {
				w.saved, _ = config.Parse(tt.saved)
				w.opts.LastApplied = config.NewLastApplied(nil, "ns", "s")
			}
			if tt.savedErr {
				w.savedErr = config.ErrLastAppliedUnreadable
			}
			for _, e := range tt.events {
				w.observe(e)
				q.run(w)
			}
			var got map[string]bool
			if c := q.inForce(); c != nil {
				got = c.Enabled
			}
			if diff := cmp.Diff(tt.wantCfg, got); diff != "" {
				t.Errorf("Enabled in force (-want +got):\n%s", diff)
			}
			cs := w.Health().Conditions()
			conds := make([]string, 0, len(cs))
			for _, c := range cs {
				conds = append(conds, c.Type)
			}
			if diff := cmp.Diff(tt.conds, conds, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.emitted, ev.events); diff != "" {
				t.Errorf("Events (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.logs, configLogLines(t, buf.String()), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("log lines (-want +got):\n%s", diff)
			}
			if got := gauge(t, w.opts.Recorder, "addon_operator_config_errors_total"); got != tt.errors {
				t.Errorf("config errors = %v, want %v", got, tt.errors)
			}
			if got := gauge(t, w.opts.Recorder, "addon_operator_config_map_present"); got != tt.present {
				t.Errorf("config map present = %v, want %v", got, tt.present)
			}
		})
	}
}

// configLogLines returns "LEVEL msg" of each log line about the ConfigMap.
func configLogLines(t *testing.T, out string) []string {
	t.Helper()
	var lines []string
	for l := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
		if l == "" {
			continue
		}
		var rec struct{ Level, Msg string }
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(rec.Msg, "ConfigMap") {
			lines = append(lines, rec.Level+" "+rec.Msg)
		}
	}
	return lines
}

// gauge returns the value of an unlabelled metric.
func gauge(t *testing.T, r *metrics.Recorder, name string) float64 {
	t.Helper()
	mfs, err := r.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		m := mf.GetMetric()[0]
		if c := m.GetCounter(); c != nil {
			return c.GetValue()
		}
		return m.GetGauge().GetValue()
	}
	t.Fatalf("no metric %s", name)
	return 0
}

func TestWritePatchOnlyTouchesItsOwnKeys(t *testing.T) {
	base := map[string]string{"global": "g: 1", "a": "x: 1"}
	patch := values.Patch{{Op: "add", Path: "/a/y", Value: 2.0}}
	tests := []struct {
		name     string
		user     map[string]string // the ConfigMap change applied while the write is in flight; nil for none
		seen     bool              // the ConfigMap was seen, and its deletion keeps the config
		writeErr error
		wantErr  bool
		want     map[string]values.Values
	}{
		{
			name: "success keeps the patch", want: map[string]values.Values{"global": {"g": 1.0}, "a": {"x": 1.0, "y": 2.0}},
		},
		{
			name: "failure undoes the patch", writeErr: errors.New("conflict"), wantErr: true,
			want: map[string]values.Values{"global": {"g": 1.0}, "a": {"x": 1.0}},
		},
		{
			name: "failure keeps a user change to another key", writeErr: errors.New("conflict"), wantErr: true,
			user: map[string]string{"global": "g: 2", "a": "x: 1"},
			want: map[string]values.Values{"global": {"g": 2.0}, "a": {"x": 1.0}},
		},
		{
			name: "failure keeps a user change to the same key", writeErr: errors.New("conflict"), wantErr: true,
			user: map[string]string{"global": "g: 1", "a": "x: 5"},
			want: map[string]values.Values{"global": {"g": 1.0}, "a": {"x": 5.0}},
		},
		{
			name: "a deleted ConfigMap keeps the patch in memory", seen: true, writeErr: fmt.Errorf("write: %w", config.ErrAbsent),
			want: map[string]values.Values{"global": {"g": 1.0}, "a": {"x": 1.0, "y": 2.0}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mods, st := testStore(t)
			src := &fakeSource{started: make(chan config.Edit), result: make(chan error)}
			w := New(Options{Source: src, Queue: &fakeQueue{}, Store: st, Modules: mods, Clock: clock.RealClock{}, Logger: slog.New(slog.DiscardHandler)})
			w.Health().Observe(true, tt.seen)
			st.SetConfig(mustParse(t, base))
			m, _ := mods.Module("a")
			errc := make(chan error, 1)
			go func() { errc <- w.WritePatch(t.Context(), m, patch) }()
			edit := <-src.started
			if edit.NoCreate != tt.seen {
				t.Errorf("NoCreate = %v, want %v", edit.NoCreate, tt.seen)
			}
			if tt.user != nil {
				st.SetConfig(mustParse(t, tt.user)) // the main queue applies a user's change meanwhile
			}
			src.result <- tt.writeErr
			if err := <-errc; (err != nil) != tt.wantErr {
				t.Fatalf("WritePatch() = %v, want error %v", err, tt.wantErr)
			}
			c := st.Config()
			got := map[string]values.Values{"global": c.Global, "a": c.Modules["a"]}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("config in force (-want +got):\n%s", diff)
			}
		})
	}
}

// testStore discovers module a (a chart) and b (hooks only) and returns
// them with their values store.
func testStore(t *testing.T) (*module.Set, *store.Store) {
	t.Helper()
	dir := t.TempDir()
	for name, content := range map[string]string{
		"modules/values.yaml":             "aEnabled: true\nbEnabled: true\n",
		"modules/010-a/templates/cm.yaml": "kind: ConfigMap",
		"modules/020-b/values.yaml":       "",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	mods, err := module.Discover(module.Options{ModulesDirs: []string{filepath.Join(dir, "modules")}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.New(mods)
	if err != nil {
		t.Fatal(err)
	}
	return mods, st
}

func mustParse(t *testing.T, data map[string]string) *config.Config {
	t.Helper()
	c, err := config.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// syncBuffer is a log output safe for concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
