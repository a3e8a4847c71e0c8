package charts

import (
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// Labels the checks select by: the operator puts moduleLabel on every
// object of a release; the four charts put instanceLabel, the release
// name, on their objects and Pod templates, hook Jobs' included.
const (
	moduleLabel   = "addon-operator.io/module"
	instanceLabel = "app.kubernetes.io/instance"
)

// publicChart is a chart of the corpus run as a module, with the values a
// cluster without a kubelet, a network to Pods or a cloud needs.
type publicChart struct {
	name string
	// What of a real chart it checks.
	checks string
	// values are merged into the copy's values.yaml, each documented: a
	// module's values reach the chart under its module key, which a
	// public chart does not read, so the copy's defaults are where a
	// chart's own settings go.
	values map[string]any
}

func publicCharts() []publicChart {
	return []publicChart{
		{name: "podinfo", checks: "a plain Deployment and Service, Helm test hooks rendered but not run; kubeVersion >=1.23"},
		{
			name:   "metrics-server",
			checks: "RBAC across namespaces (kube-system RoleBinding, ClusterRoles)",
			values: map[string]any{
				// An APIService for metrics.k8s.io backed by Pods no network
				// reaches would make that API unavailable and every discovery
				// (the operator's, the namespace controller's) fail for it.
				"apiService": map[string]any{"create": false},
			},
		},
		{name: "kube-state-metrics", checks: "global: defaults (imageRegistry, imagePullSecrets) its templates read"},
		{
			name:   "ingress-nginx",
			checks: "global.image.registry defaulted only by its values.yaml; admission webhook with pre-install and post-install hook Jobs, which complete on simulated nodes",
			values: map[string]any{
				"controller": map[string]any{
					// A LoadBalancer Service waits for an address no cloud
					// controller will give; its module would never be Ready.
					"service": map[string]any{"type": "ClusterIP"},
				},
			},
		},
	}
}

// corpusChart returns the path of a chart of the corpus beside the
// repository.
func corpusChart(t *testing.T, name string) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("locate test source")
	}
	dir := filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "corpus", "charts", name)
	if _, err := os.Stat(filepath.Join(dir, "Chart.yaml")); err != nil {
		t.Fatalf("the corpus of public charts is not beside the repository: %v", err)
	}
	return dir
}

// installChart copies the chart into modules/<name> and merges values into
// the copy's values.yaml.
func installChart(t *testing.T, modules string, c publicChart) {
	t.Helper()
	dst := filepath.Join(modules, c.name)
	if err := os.CopyFS(dst, os.DirFS(corpusChart(t, c.name))); err != nil {
		t.Fatalf("copy chart %s: %v", c.name, err)
	}
	if len(c.values) == 0 {
		return
	}
	path := filepath.Join(dst, "values.yaml")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defaults := map[string]any{}
	if err := yaml.Unmarshal(raw, &defaults); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	merge(defaults, c.values)
	out, err := yaml.Marshal(defaults)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o600); err != nil { // copied read-only from the corpus
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
}

// merge sets src's leaves into dst, map by map.
func merge(dst, src map[string]any) {
	for k, v := range src {
		sub, isMap := v.(map[string]any)
		if cur, ok := dst[k].(map[string]any); ok && isMap {
			merge(cur, sub)
			continue
		}
		dst[k] = v
	}
}

// writeFiles writes files (path -> content) below dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// enabledKey is the ConfigMap key that enables a module.
func enabledKey(name string) string {
	parts := strings.Split(name, "-")
	for i := 1; i < len(parts); i++ {
		parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
	}
	return strings.Join(parts, "") + "Enabled"
}

// The four public charts, unchanged but for the values a simulated cluster
// needs, become Ready modules; a deleted Deployment of each is put back;
// a disabled one is uninstalled with nothing of it left.
func TestChartsPublicChartsAsModules(t *testing.T) {
	t.Parallel()
	h := operatortest.New(t, cp, bin)
	modules := filepath.Join(t.TempDir(), "modules")
	config := map[string]string{}
	charts := publicCharts()
	for _, c := range charts {
		installChart(t, modules, c)
		config[enabledKey(c.name)] = "true"
	}
	h.SetConfig(config)
	h.Start(operatortest.Options{ModulesDir: modules})

	deployments := map[string]appsv1.Deployment{}
	for _, c := range charts {
		t.Logf("%s checks %s", c.name, c.checks)
		h.WaitModule(c.name, "Ready", func(m status.ModuleStatus) bool { return m.Phase == status.PhaseReady })
		d := chartDeployment(t, h, c.name)
		if !available(&d) {
			t.Errorf("%s is Ready while its Deployment %s is not available: %+v", c.name, d.Name, d.Status)
		}
		deployments[c.name] = d
	}
	h.WaitReady()

	for _, c := range charts {
		before := deployments[c.name]
		if err := h.Client.AppsV1().Deployments(h.Namespace).Delete(t.Context(), before.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete %s's Deployment: %v", c.name, err)
		}
		h.Poll(c.name+"'s Deployment to be put back and available", func() bool {
			d, err := h.Client.AppsV1().Deployments(h.Namespace).Get(t.Context(), before.Name, metav1.GetOptions{})
			return err == nil && d.UID != before.UID && available(d)
		})
	}

	for _, c := range charts {
		d := deployments[c.name]
		// What is looked for is there while the module is enabled.
		if left := strings.Join(leftovers(t, h, c.name, d.Spec.Selector), ", "); !strings.Contains(left, "Deployment "+h.Namespace+"/"+d.Name) || !strings.Contains(left, "Pod ") {
			t.Errorf("objects of enabled %s: %s; want its Deployment and Pods", c.name, left)
		}
		config[enabledKey(c.name)] = "false"
		h.SetConfig(config)
		h.WaitModule(c.name, "Disabled", func(m status.ModuleStatus) bool { return m.Phase == status.PhaseDisabled })
		h.Poll(c.name+"'s release and objects to be gone", func() bool {
			return h.ReleaseRevision(c.name) == 0 && len(leftovers(t, h, c.name, d.Spec.Selector)) == 0
		})
	}
}

// chartDeployment returns the one Deployment of release name.
func chartDeployment(t *testing.T, h *operatortest.Harness, name string) appsv1.Deployment {
	t.Helper()
	list, err := h.Client.AppsV1().Deployments(h.Namespace).List(t.Context(), metav1.ListOptions{LabelSelector: moduleLabel + "=" + name})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 {
		t.Fatalf("%s has %d Deployments, want 1", name, len(list.Items))
	}
	return list.Items[0]
}

func available(d *appsv1.Deployment) bool {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionTrue {
			return d.Status.AvailableReplicas == ptr.Deref(d.Spec.Replicas, 1)
		}
	}
	return false
}

// leftovers names what is there of release name: objects of any listable
// kind, in any namespace or none, that carry its module label, and Pods of
// its Deployment (pods) or carrying its instance label (hook Jobs' Pods).
func leftovers(t *testing.T, h *operatortest.Harness, name string, pods *metav1.LabelSelector) []string {
	t.Helper()
	ctx := t.Context()
	podSelector, err := metav1.LabelSelectorAsSelector(pods)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, selector := range []string{podSelector.String(), instanceLabel + "=" + name} {
		list, err := h.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			t.Fatal(err)
		}
		for i := range list.Items {
			left = append(left, "Pod "+list.Items[i].Namespace+"/"+list.Items[i].Name)
		}
	}
	cfg := rest.CopyConfig(cp.Config)
	cfg.WarningHandler = rest.NoWarnings{} // deprecated kinds listed
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, gvr := range listable(t) {
		list, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{LabelSelector: moduleLabel + "=" + name})
		if err != nil {
			continue // a kind that cannot be listed by label now; others tell
		}
		for _, o := range list.Items {
			left = append(left, o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName())
		}
	}
	if len(left) > 0 {
		t.Logf("left of %s: %s", name, strings.Join(left, ", "))
	}
	return left
}

// listable returns every resource the API server lists, preferred version
// only.
func listable(t *testing.T) []schema.GroupVersionResource {
	t.Helper()
	cfg := rest.CopyConfig(cp.Config)
	cfg.WarningHandler = rest.NoWarnings{}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	lists, err := dc.ServerPreferredResources()
	if err != nil && len(lists) == 0 {
		t.Fatalf("discovery: %v", err)
	}
	seen := map[schema.GroupVersionResource]bool{}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for i := range l.APIResources {
			r := &l.APIResources[i]
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") {
				continue
			}
			seen[gv.WithResource(r.Name)] = true
		}
	}
	return slices.SortedFunc(maps.Keys(seen), func(a, b schema.GroupVersionResource) int { return strings.Compare(a.String(), b.String()) })
}
