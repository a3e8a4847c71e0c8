package helm

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"github.com/addon-operator/addon-operator/pkg/helm"
)

// Chart hooks whose resources are ConfigMaps and Secrets: Helm considers
// them ready once created, so they run without a kubelet. The order in
// which Helm creates and deletes them is read from a watch, which delivers
// one kind's events in the order the API server committed them.

// hookTestLabel marks every object of the hook test charts, and the
// watches' markers, so a watch sees them and not Helm's storage Secrets.
const hookTestLabel = "e2e.addon-operator.io/chart-hooks"

// hookRelease is the release name of the hook test charts.
const hookRelease = "hooks"

// hookSpec is one hook resource of a test chart.
type hookSpec struct {
	kind   string // ConfigMap or Secret
	name   string
	events string // helm.sh/hook
	weight int
	policy string // helm.sh/hook-delete-policy; empty leaves Helm's default
}

// template renders the hook's manifest. Its data records the release
// revision it ran for and a value only hooks read.
func (h hookSpec) template() string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: %s\nmetadata:\n  name: %s\n  labels:\n    %s: \"true\"\n", h.kind, h.name, hookTestLabel)
	fmt.Fprintf(&b, "  annotations:\n    helm.sh/hook: %s\n    helm.sh/hook-weight: \"%d\"\n", h.events, h.weight)
	if h.policy != "" {
		fmt.Fprintf(&b, "    helm.sh/hook-delete-policy: %s\n", h.policy)
	}
	if h.kind == "Secret" {
		b.WriteString("stringData:\n")
	} else {
		b.WriteString("data:\n")
	}
	b.WriteString("  revision: {{ .Release.Revision | quote }}\n")
	b.WriteString("  note: {{ .Values.hooks.note | default \"none\" | quote }}\n")
	return b.String()
}

// mainTemplate is the release's one ordinary object.
const mainTemplate = `apiVersion: v1
kind: ConfigMap
metadata:
  name: main
  labels:
    ` + hookTestLabel + `: "true"
data:
  greeting: {{ .Values.hooks.greeting | quote }}
`

// writeHookChart writes a chart with the main ConfigMap and hooks into a
// temporary directory and returns it.
func writeHookChart(t *testing.T, hooks []hookSpec) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"Chart.yaml":          "apiVersion: v2\nname: hooks\nversion: 0.1.0\n",
		"templates/main.yaml": mainTemplate,
	}
	for _, h := range hooks {
		files["templates/"+h.name+".yaml"] = h.template()
	}
	for name, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// hooksRelease is the release of a hook test chart: greeting reaches the
// main ConfigMap, note only the hooks.
func hooksRelease(dir, greeting, note string) helm.Release {
	vals := map[string]any{"greeting": greeting}
	if note != "" {
		vals["note"] = note
	}
	return helm.Release{
		Name:     hookRelease,
		ChartDir: dir,
		Values:   map[string]any{"global": map[string]any{}, hookRelease: vals},
	}
}

// hookWatch records the creations, updates and deletions of one kind of
// labelled object in a namespace.
type hookWatch struct {
	t       *testing.T
	client  dynamic.ResourceInterface
	kind    string
	events  <-chan watch.Event
	markers int
}

func watchHookObjects(t *testing.T, ns, kind string) *hookWatch {
	t.Helper()
	dyn, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Version: "v1", Resource: strings.ToLower(kind) + "s"}
	client := dyn.Resource(gvr).Namespace(ns)
	opts := metav1.ListOptions{LabelSelector: hookTestLabel + "=true"}
	list, err := client.List(t.Context(), opts)
	if err != nil {
		t.Fatalf("list %ss: %v", kind, err)
	}
	opts.ResourceVersion = list.GetResourceVersion()
	w, err := client.Watch(t.Context(), opts)
	if err != nil {
		t.Fatalf("watch %ss: %v", kind, err)
	}
	t.Cleanup(w.Stop)
	return &hookWatch{t: t, client: client, kind: kind, events: w.ResultChan()}
}

// next returns the events since the last call, as "create name", "update
// name" or "delete name". It creates a marker object and reads up to its
// creation, so everything committed before the call is included.
func (w *hookWatch) next() []string {
	w.t.Helper()
	w.markers++
	marker := fmt.Sprintf("marker-%d", w.markers)
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": w.kind,
		"metadata": map[string]any{"name": marker, "labels": map[string]any{hookTestLabel: "true"}},
	}}
	if _, err := w.client.Create(w.t.Context(), obj, metav1.CreateOptions{}); err != nil {
		w.t.Fatalf("create %s %s: %v", w.kind, marker, err)
	}
	verbs := map[watch.EventType]string{watch.Added: "create", watch.Modified: "update", watch.Deleted: "delete"}
	deadline := time.NewTimer(waitTimeout)
	defer deadline.Stop()
	var got []string
	for {
		select {
		case ev, ok := <-w.events:
			if !ok || ev.Type == watch.Error {
				w.t.Fatalf("%s watch ended (%v) after %v", w.kind, ev.Object, got)
			}
			name := ev.Object.(*unstructured.Unstructured).GetName()
			if name == marker {
				return got
			}
			if !strings.HasPrefix(name, "marker-") {
				got = append(got, verbs[ev.Type]+" "+name)
			}
		case <-deadline.C:
			w.t.Fatalf("%s marker %s not seen within %s; events so far %v", w.kind, marker, waitTimeout, got)
		}
	}
}

// hookObject returns the data (of a ConfigMap) and the UID of a hook's
// object, or ok false when it does not exist.
func (w *hookWatch) hookObject(name string) (data map[string]string, uid string, ok bool) {
	w.t.Helper()
	obj, err := w.client.Get(w.t.Context(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, "", false
	}
	if err != nil {
		w.t.Fatalf("get %s %s: %v", w.kind, name, err)
	}
	raw, _, _ := unstructured.NestedStringMap(obj.Object, "data")
	return raw, string(obj.GetUID()), true
}

// recreated lists the events of hooks run again under the default
// before-hook-creation policy: the old object is deleted, a new one created.
func recreated(names ...string) []string {
	out := make([]string, 0, 2*len(names))
	for _, n := range names {
		out = append(out, "delete "+n, "create "+n)
	}
	return out
}

// lifecycleHooks have weights that order them differently from their
// names and from their files, and ties broken by name.
func lifecycleHooks() []hookSpec {
	return []hookSpec{
		{kind: "ConfigMap", name: "pre-a", events: "pre-install,pre-upgrade", weight: 5},
		{kind: "ConfigMap", name: "pre-m", events: "pre-install,pre-upgrade", weight: 0},
		{kind: "ConfigMap", name: "pre-b", events: "pre-install,pre-upgrade", weight: 0},
		{kind: "ConfigMap", name: "pre-z", events: "pre-install,pre-upgrade", weight: -5},
		{kind: "ConfigMap", name: "post-c", events: "post-install,post-upgrade", weight: 1},
		{kind: "ConfigMap", name: "post-y", events: "post-install,post-upgrade", weight: -1},
		{kind: "ConfigMap", name: "del-pre-x", events: "pre-delete", weight: 2},
		{kind: "ConfigMap", name: "del-pre-d", events: "pre-delete", weight: -2},
		{kind: "ConfigMap", name: "del-post-e", events: "post-delete"},
	}
}

func TestChartHooksRunInWeightOrder(t *testing.T) {
	ns := cp.Namespace(t)
	c := newClient(t, ns)
	dir := writeHookChart(t, lifecycleHooks())
	cms := watchHookObjects(t, ns, "ConfigMap")

	apply(t, c, hooksRelease(dir, "hello", ""))
	want := []string{
		"create pre-z", "create pre-b", "create pre-m", "create pre-a",
		"create main",
		"create post-y", "create post-c",
	}
	if diff := cmp.Diff(want, cms.next()); diff != "" {
		t.Errorf("install (-want +got):\n%s", diff)
	}

	if out := apply(t, c, hooksRelease(dir, "bye", "")); out.Revision != 2 {
		t.Fatalf("upgrade outcome = %+v, want revision 2", out)
	}
	want = recreated("pre-z", "pre-b", "pre-m", "pre-a")
	want = append(want, "update main")
	want = append(want, recreated("post-y", "post-c")...)
	if diff := cmp.Diff(want, cms.next()); diff != "" {
		t.Errorf("upgrade (-want +got):\n%s", diff)
	}
	for _, name := range []string{"pre-z", "pre-a", "post-c"} {
		if data, _, _ := cms.hookObject(name); data["revision"] != "2" {
			t.Errorf("hook %s data %v, want it rendered for revision 2", name, data)
		}
	}

	existed, err := c.Uninstall(t.Context(), hookRelease)
	if err != nil || !existed {
		t.Fatalf("Uninstall = %v, %v; want true, nil", existed, err)
	}
	want = []string{"create del-pre-d", "create del-pre-x", "delete main", "create del-post-e"}
	if diff := cmp.Diff(want, cms.next()); diff != "" {
		t.Errorf("uninstall (-want +got):\n%s", diff)
	}
	// Helm does not manage hook resources: without a delete policy that
	// removes them, they outlive the release.
	for _, name := range []string{"pre-z", "post-c", "del-pre-x", "del-post-e"} {
		if _, _, ok := cms.hookObject(name); !ok {
			t.Errorf("hook %s was deleted with the release; Helm keeps hook resources", name)
		}
	}
}

func TestChartHookDeletePolicies(t *testing.T) {
	ns := cp.Namespace(t)
	c := newClient(t, ns)
	dir := writeHookChart(t, []hookSpec{
		{kind: "ConfigMap", name: "a-default", events: "pre-install,pre-upgrade", weight: -1},
		{kind: "ConfigMap", name: "b-succeeded", events: "pre-install,pre-upgrade", policy: "hook-succeeded"},
		{kind: "ConfigMap", name: "c-failed", events: "pre-install", weight: 1, policy: "hook-failed"},
		{kind: "Secret", name: "s-created", events: "post-install,post-upgrade", policy: "before-hook-creation"},
		{kind: "Secret", name: "s-succeeded", events: "post-install,post-upgrade", weight: 1, policy: "hook-succeeded"},
	})
	cms := watchHookObjects(t, ns, "ConfigMap")
	secrets := watchHookObjects(t, ns, "Secret")

	apply(t, c, hooksRelease(dir, "hello", ""))
	// hook-succeeded objects go once every hook of the event succeeded,
	// before Helm moves on to the release's objects.
	wantCMs := []string{"create a-default", "create b-succeeded", "create c-failed", "delete b-succeeded", "create main"}
	if diff := cmp.Diff(wantCMs, cms.next()); diff != "" {
		t.Errorf("ConfigMaps on install (-want +got):\n%s", diff)
	}
	wantSecrets := []string{"create s-created", "create s-succeeded", "delete s-succeeded"}
	if diff := cmp.Diff(wantSecrets, secrets.next()); diff != "" {
		t.Errorf("Secrets on install (-want +got):\n%s", diff)
	}
	_, failedUID, ok := cms.hookObject("c-failed")
	if !ok {
		t.Fatal("hook-failed hook was deleted although it succeeded")
	}

	apply(t, c, hooksRelease(dir, "bye", ""))
	wantCMs = append(recreated("a-default"), "create b-succeeded", "delete b-succeeded", "update main")
	if diff := cmp.Diff(wantCMs, cms.next()); diff != "" {
		t.Errorf("ConfigMaps on upgrade (-want +got):\n%s", diff)
	}
	wantSecrets = append(recreated("s-created"), "create s-succeeded", "delete s-succeeded")
	if diff := cmp.Diff(wantSecrets, secrets.next()); diff != "" {
		t.Errorf("Secrets on upgrade (-want +got):\n%s", diff)
	}

	if data, _, _ := cms.hookObject("a-default"); data["revision"] != "2" {
		t.Errorf("default-policy hook data %v, want the object of revision 2", data)
	}
	if data, uid, ok := cms.hookObject("c-failed"); !ok || uid != failedUID || data["revision"] != "1" {
		t.Errorf("hook-failed hook after upgrade: exists %v, data %v, same object %v; want revision 1's object kept", ok, data, uid == failedUID)
	}
	if _, _, ok := cms.hookObject("b-succeeded"); ok {
		t.Error("hook-succeeded ConfigMap still exists")
	}
	if _, _, ok := secrets.hookObject("s-succeeded"); ok {
		t.Error("hook-succeeded Secret still exists")
	}
}

func TestRejectedHookFailsTheReleaseUntilFixed(t *testing.T) {
	ns := cp.Namespace(t)
	c := newClient(t, ns)
	dir := writeHookChart(t, []hookSpec{{kind: "ConfigMap", name: "pre-a", events: "pre-install,pre-upgrade", weight: -1}})
	// A second hook that the API server rejects while note is "break".
	bad := hookSpec{kind: "ConfigMap", name: "pre-b", events: "pre-install,pre-upgrade"}.template() +
		"{{- if eq (.Values.hooks.note | default \"\") \"break\" }}\n  \"not a key!\": x\n{{- end }}\n"
	if err := os.WriteFile(filepath.Join(dir, "templates", "pre-b.yaml"), []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	cms := watchHookObjects(t, ns, "ConfigMap")

	if out, err := c.Apply(t.Context(), hooksRelease(dir, "hello", "break")); err == nil {
		t.Fatalf("Apply with a rejected hook = %+v, want an error", out)
	}
	if st, err := c.Status(t.Context(), hookRelease); err != nil || st.State != "failed" || st.Revision != 1 {
		t.Errorf("Status after the rejected hook = %+v, %v; want revision 1 failed", st, err)
	}
	if diff := cmp.Diff([]string{"create pre-a"}, cms.next()); diff != "" {
		t.Errorf("install with a rejected hook: the release's objects must not be created (-want +got):\n%s", diff)
	}

	out := apply(t, c, hooksRelease(dir, "hello", ""))
	if diff := cmp.Diff(helm.Outcome{Revision: 2, Checksum: out.Checksum, Reason: helm.ReasonNotDeployed, Manifest: out.Manifest}, out,
		cmpopts.IgnoreFields(helm.Outcome{}, "Created", "Rendered")); diff != "" {
		t.Errorf("apply after the fix (-want +got):\n%s", diff)
	}
	want := append(recreated("pre-a"), "create pre-b", "create main")
	if diff := cmp.Diff(want, cms.next()); diff != "" {
		t.Errorf("upgrade after the fix (-want +got):\n%s", diff)
	}
}

func TestHookOnlyChangeDeploysNewRevision(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, dir string) (note string)
		want   map[string]string // the hook's data after the change
	}{{
		name: "hook template edited",
		change: func(t *testing.T, dir string) string {
			t.Helper()
			path := filepath.Join(dir, "templates", "pre-a.yaml")
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, append(data, "  edited: \"yes\"\n"...), 0o600); err != nil {
				t.Fatal(err)
			}
			return ""
		},
		want: map[string]string{"revision": "2", "note": "none", "edited": "yes"},
	}, {
		name:   "value only a hook reads",
		change: func(*testing.T, string) string { return "changed" },
		want:   map[string]string{"revision": "2", "note": "changed"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			ns := cp.Namespace(t)
			c := newClient(t, ns)
			dir := writeHookChart(t, []hookSpec{{kind: "ConfigMap", name: "pre-a", events: "pre-install,pre-upgrade"}})
			cms := watchHookObjects(t, ns, "ConfigMap")
			installed := apply(t, c, hooksRelease(dir, "hello", ""))
			if out := apply(t, c, hooksRelease(dir, "hello", "")); !out.Skipped {
				t.Fatalf("apply without changes = %+v, want skipped", out)
			}
			before := renderChart(t, c, hooksRelease(dir, "hello", ""))
			cms.next()

			r := hooksRelease(dir, "hello", tc.change(t, dir))
			after := renderChart(t, c, r)
			if before.Manifest != after.Manifest || cmp.Equal(before.Hooks, after.Hooks) {
				t.Fatal("the change must alter the hooks only; the test does not test what it says")
			}
			out := apply(t, c, r)
			want := helm.Outcome{Revision: 2, Checksum: after.Checksum, Reason: helm.ReasonChecksumChanged, Manifest: after.Manifest}
			if diff := cmp.Diff(want, out, cmpopts.IgnoreFields(helm.Outcome{}, "Created", "Rendered")); diff != "" || out.Checksum == installed.Checksum {
				t.Errorf("apply after a hook-only change (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"delete pre-a", "create pre-a"}, cms.next()); diff != "" {
				t.Errorf("hook events (-want +got):\n%s", diff)
			}
			data, _, _ := cms.hookObject("pre-a")
			if diff := cmp.Diff(tc.want, data); diff != "" {
				t.Errorf("hook data (-want +got):\n%s", diff)
			}
		})
	}
}

func renderChart(t *testing.T, c *helm.Client, r helm.Release) *helm.Rendered {
	t.Helper()
	rendered, err := c.Render(t.Context(), r)
	if err != nil {
		t.Fatalf("render %s: %v", r.Name, err)
	}
	return rendered
}
