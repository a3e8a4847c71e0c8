package helm

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/addon-operator/addon-operator/pkg/helm"
	"github.com/addon-operator/addon-operator/pkg/kube/heal"
)

// requestCounter counts the HTTP requests of the clients it wraps.
type requestCounter struct{ n atomic.Int64 }

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func (c *requestCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		c.n.Add(1)
		return rt.RoundTrip(r)
	})
}

// countedClient is a Client for ns whose requests count counts, answering
// Owned from records when set.
func countedClient(t *testing.T, ns string, count *requestCounter, records helm.ReleaseRecords) *helm.Client {
	t.Helper()
	cfg := rest.CopyConfig(cp.Config)
	cfg.Wrap(count.wrap)
	c, err := helm.New(helm.Options{RESTConfig: cfg, Namespace: ns, Timeout: time.Minute, Records: records,
		Logger: slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelInfo}))})
	if err != nil {
		t.Fatalf("new helm client: %v", err)
	}
	return c
}

// countedHelm is a plain Helm configuration for ns whose requests count
// counts.
func countedHelm(t *testing.T, ns string, count *requestCounter) *action.Configuration {
	t.Helper()
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &cp.Kubeconfig
	flags.Namespace = &ns
	flags.WrapConfigFn = func(c *rest.Config) *rest.Config { c.Wrap(count.wrap); return c }
	cfg := new(action.Configuration)
	if err := cfg.Init(flags, ns, "secret", func(string, ...any) {}); err != nil {
		t.Fatalf("init helm: %v", err)
	}
	return cfg
}

// helmListOwned is the answer of Helm's own list, which decodes every
// record: the releases whose last revision, in any listed state, carries
// LabelManagedBy. It is what Owned answered before it read metadata only.
func helmListOwned(cfg *action.Configuration) ([]string, error) {
	list := action.NewList(cfg)
	list.All, list.StateMask = true, action.ListAll
	list.Selector = helm.LabelManagedBy + "=" + helm.ManagedByValue
	rels, err := list.Run()
	if err != nil {
		return nil, fmt.Errorf("helm list: %w", err)
	}
	names := make([]string, 0, len(rels))
	for _, r := range rels {
		names = append(names, r.Name)
	}
	slices.Sort(names)
	return names, nil
}

// namedChart is a module whose one ConfigMap is named after its release
// and shows its values.
func namedChart(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, dir, "templates/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  values: {{ toJson .Values | quote }}\n")
	return dir
}

// storeBulk writes releases × revisions records straight through Helm's
// secret driver, each with a chart and manifest of a few kilobytes like a
// real module's; every other release is labelled as the operator's. It
// returns the names of the operator's and of the others.
func storeBulk(t *testing.T, ns string, releases, revisions int) (ours, theirs []string) {
	t.Helper()
	cfg := helmConfig(t, ns)
	body := strings.Repeat("# a line of a template, as charts have many of them\n", 80)
	for i := range releases {
		name := fmt.Sprintf("bulk-%03d", i)
		ch := &chart.Chart{
			Metadata:  &chart.Metadata{APIVersion: chart.APIVersionV2, Name: name, Version: "1.0.0"},
			Templates: []*chart.File{{Name: "templates/a.yaml", Data: []byte(body)}, {Name: "templates/b.yaml", Data: []byte(body)}},
		}
		var labels map[string]string
		if i%2 == 0 {
			labels = map[string]string{helm.LabelManagedBy: helm.ManagedByValue, helm.LabelChecksum: "sum"}
			ours = append(ours, name)
		} else {
			theirs = append(theirs, name)
		}
		for v := 1; v <= revisions; v++ {
			status := release.StatusSuperseded
			if v == revisions {
				status = release.StatusDeployed
			}
			r := &release.Release{Name: name, Namespace: ns, Version: v, Chart: ch, Manifest: body + body,
				Config: map[string]any{"n": v}, Info: &release.Info{Status: status}, Labels: labels}
			if err := cfg.Releases.Create(r); err != nil {
				t.Fatalf("store %s revision %d: %v", name, v, err)
			}
		}
	}
	return ours, theirs
}

// TestOwnedFromRecordMetadata shows that Owned, answered from the records'
// metadata (a watch, or one LIST), equals Helm's decode-everything list on
// records the operator and plain Helm made, and measures both.
func TestOwnedFromRecordMetadata(t *testing.T) {
	ns := cp.Namespace(t)
	want, unlabeled := makeRecords(t, ns)
	var decodeCount requestCounter
	decode := countedHelm(t, ns, &decodeCount)
	if got, err := helmListOwned(decode); err != nil || !cmp.Equal(want, got) {
		t.Fatalf("Helm's list = %v, %v; want %v", got, err, want)
	}

	var listCount, watchCount requestCounter
	withList := countedClient(t, ns, &listCount, nil)
	if got, err := withList.ClaimUnlabeled(t.Context()); err != nil || !cmp.Equal(unlabeled, got) {
		t.Errorf("ClaimUnlabeled = %v, %v; want %v", got, err, unlabeled)
	}
	withWatch := countedClient(t, ns, &watchCount, runRecordWatch(t, ns))
	// The first call through the watch waits for its sync.
	if got, err := withWatch.Owned(t.Context()); err != nil || !cmp.Equal(want, got) {
		t.Fatalf("Owned from the watch = %v, %v; want %v", got, err, want)
	}
	for _, p := range []ownedPath{
		{name: "helm list decoding every record", count: &decodeCount, requests: -1,
			owned: func(context.Context) ([]string, error) { return helmListOwned(decode) }},
		{name: "metadata list", count: &listCount, requests: 1, owned: withList.Owned},
		{name: "record watch", count: &watchCount, requests: 0, owned: withWatch.Owned},
	} {
		p.measure(t, want)
	}
}

// makeRecords makes the records of TestOwnedFromRecordMetadata, with the
// operator's Client, plain Helm and Helm's storage, and returns the
// releases that are the operator's and those that are not.
func makeRecords(t *testing.T, ns string) (owned, unlabeled []string) {
	t.Helper()
	c := newClient(t, ns)
	dir := namedChart(t)
	values := func(n int) map[string]any { return map[string]any{"global": map[string]any{}, "n": n} }
	// 11 revisions, history keeps 2..11: as strings, "2" sorts last.
	for n := range 11 {
		apply(t, c, helm.Release{Name: "mine", ChartDir: dir, Values: values(n)})
	}
	// Uninstalled with its history kept: listed by Helm, so owned.
	apply(t, c, helm.Release{Name: "kept", ChartDir: dir, Values: values(0)})
	uninstall := action.NewUninstall(helmConfig(t, ns))
	uninstall.KeepHistory = true
	if _, err := uninstall.Run("kept"); err != nil {
		t.Fatalf("uninstall kept: %v", err)
	}
	// A newer revision without our label, written by someone else: not owned.
	apply(t, c, helm.Release{Name: "lost", ChartDir: dir, Values: values(0)})
	store := helmConfig(t, ns).Releases
	last, err := store.Last("lost")
	if err != nil {
		t.Fatalf("read lost: %v", err)
	}
	last.Version++
	delete(last.Labels, helm.LabelManagedBy)
	if err := store.Create(last); err != nil {
		t.Fatalf("store lost revision %d: %v", last.Version, err)
	}
	installForeign(t, ns, "foreign")
	ours, theirs := storeBulk(t, ns, 40, 5)

	owned = append([]string{"kept", "mine"}, ours...)
	slices.Sort(owned)
	unlabeled = append([]string{"foreign", "lost"}, theirs...)
	slices.Sort(unlabeled)
	return owned, unlabeled
}

// runRecordWatch runs the record watch, as the operator does, until the
// test ends.
func runRecordWatch(t *testing.T, ns string) *heal.RecordWatcher {
	t.Helper()
	md, err := metadata.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	watch, err := heal.NewRecordWatcher(heal.RecordWatcherOptions{Metadata: md, Namespace: ns, Events: make(chan heal.Event), Labels: []string{helm.LabelManagedBy}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- watch.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("record watch: %v", err)
		}
	})
	return watch
}

// ownedPath is one way to answer Owned, measured by measure.
type ownedPath struct {
	name  string
	count *requestCounter
	owned func(context.Context) ([]string, error)
	// requests is what one call must make; -1 is not checked.
	requests int64
}

// measure calls p a few times, checks its answers are want and the
// requests per call, and logs requests, time and allocation per call.
func (p ownedPath) measure(t *testing.T, want []string) {
	t.Helper()
	const calls = 5
	var before, after runtime.MemStats
	p.count.n.Store(0)
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	for range calls {
		got, err := p.owned(t.Context())
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-helm list +got):\n%s", p.name, diff)
		}
	}
	took := time.Since(start) / calls
	runtime.ReadMemStats(&after)
	requests := p.count.n.Load() / calls
	t.Logf("owned of %d records, %s: %d requests, %s, %d KiB allocated per call",
		recordCount, p.name, requests, took.Round(time.Microsecond), (after.TotalAlloc-before.TotalAlloc)/calls/1024)
	if p.requests >= 0 && requests != p.requests {
		t.Errorf("%s: %d requests per call, want %d", p.name, requests, p.requests)
	}
}

// recordCount is how many records TestOwnedFromRecordMetadata makes:
// mine's 10 kept revisions, kept 1, lost 2, foreign 1 and the bulk 40×5.
const recordCount = 10 + 1 + 2 + 1 + 40*5
