package helm

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/dynamic"

	"github.com/addon-operator/addon-operator/pkg/helm"
)

func TestInstallSkipUpgrade(t *testing.T) {
	ns := cp.Namespace(t)
	c := newClient(t, ns)

	installed := apply(t, c, echo("hello"))
	if diff := cmp.Diff(helm.Outcome{Revision: 1, Checksum: installed.Checksum, Reason: helm.ReasonNoRelease, Manifest: installed.Manifest, Fresh: true},
		installed, cmpopts.IgnoreFields(helm.Outcome{}, "Created", "Rendered")); diff != "" {
		t.Errorf("install outcome (-want +got):\n%s", diff)
	}
	cm := configMap(t, ns, "echo")
	// The objects Helm created, each at the version the server gave it:
	// the release's ConfigMap and ClusterRole, and the pre-install hook's.
	created := map[string]string{}
	for _, o := range installed.Created {
		created[o.Kind+" "+o.Namespace+"/"+o.Name] = o.ResourceVersion
	}
	if rv := created["ConfigMap "+ns+"/echo"]; rv != cm.ResourceVersion {
		t.Errorf("created ConfigMap echo at version %q, the cluster has %q (created: %v)", rv, cm.ResourceVersion, created)
	}
	if _, ok := created["ClusterRole /"+ns+"-echo"]; !ok {
		t.Errorf("the cluster-scoped ClusterRole is not among the created objects, or has a namespace: %v", created)
	}
	if cm.Data["greeting"] != "hello" {
		t.Errorf("greeting = %q, want hello", cm.Data["greeting"])
	}
	checkObjectLabels(t, "ConfigMap", cm.Labels)
	role, err := cp.Clientset(t).RbacV1().ClusterRoles().Get(t.Context(), ns+"-echo", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get cluster-scoped object: %v", err)
	}
	checkObjectLabels(t, "ClusterRole", role.Labels)
	if hook := configMap(t, ns, "echo-hook"); hook.Data["revision"] != "1" {
		t.Errorf("pre-install hook ran for revision %q, want 1", hook.Data["revision"])
	}
	checkReleaseSecrets(t, ns, installed.Checksum, 1)
	checkCRDSkipped(t)

	again := apply(t, c, echo("hello"))
	if diff := cmp.Diff(helm.Outcome{Revision: 1, Checksum: installed.Checksum, Skipped: true, Manifest: installed.Manifest}, again, cmpopts.IgnoreFields(helm.Outcome{}, "Rendered")); diff != "" {
		t.Errorf("second apply outcome (-want +got):\n%s", diff)
	}

	upgraded := apply(t, c, echo("bye"))
	if upgraded.Revision != 2 || upgraded.Reason != helm.ReasonChecksumChanged || upgraded.Checksum == installed.Checksum {
		t.Errorf("upgrade outcome = %+v, want revision 2 for %s with a new checksum", upgraded, helm.ReasonChecksumChanged)
	}
	if got := configMap(t, ns, "echo").Data["greeting"]; got != "bye" {
		t.Errorf("greeting after upgrade = %q, want bye", got)
	}
	if hook := configMap(t, ns, "echo-hook"); hook.Data["revision"] != "2" {
		t.Errorf("pre-upgrade hook ran for revision %q, want 2", hook.Data["revision"])
	}
	checkReleaseSecrets(t, ns, upgraded.Checksum, 2)
}

// checkReleaseSecrets checks the release's storage Secrets: one per
// revision, the last labelled with ownership and checksum.
func checkReleaseSecrets(t *testing.T, ns, checksum string, revisions int) {
	t.Helper()
	secrets, err := cp.Clientset(t).CoreV1().Secrets(ns).List(t.Context(), metav1.ListOptions{
		LabelSelector: "owner=helm,name=echo," + helm.LabelManagedBy + "=" + helm.ManagedByValue,
	})
	if err != nil {
		t.Fatalf("list release secrets: %v", err)
	}
	if len(secrets.Items) != revisions {
		t.Fatalf("owned release secrets = %d, want %d", len(secrets.Items), revisions)
	}
	var deployed []string
	for i := range secrets.Items {
		if labels := secrets.Items[i].Labels; labels["status"] == "deployed" {
			deployed = append(deployed, labels[helm.LabelChecksum])
		}
	}
	if diff := cmp.Diff([]string{checksum}, deployed); diff != "" {
		t.Errorf("checksum labels of deployed revisions (-want +got):\n%s", diff)
	}
}

func checkCRDSkipped(t *testing.T) {
	t.Helper()
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	client, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "CRD from crds/ must not be installed", gone(func() error {
		_, err := client.Resource(crds).Get(t.Context(), "echoes.e2e.addon-operator.io", metav1.GetOptions{})
		return err
	}))
}

func TestApplyRestoresMissingObjects(t *testing.T) {
	ns := cp.Namespace(t)
	c := newClient(t, ns)
	apply(t, c, echo("hello"))
	cs := cp.Clientset(t)

	if err := cs.CoreV1().ConfigMaps(ns).Delete(t.Context(), "echo", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	out := apply(t, c, echo("hello"))
	if out.Skipped || out.Reason != helm.ReasonObjectMissing || out.Missing != "ConfigMap/"+ns+"/echo" || out.Revision != 2 {
		t.Errorf("outcome = %+v, want revision 2 for %s ConfigMap/%s/echo", out, helm.ReasonObjectMissing, ns)
	}
	configMap(t, ns, "echo")

	if err := cs.RbacV1().ClusterRoles().Delete(t.Context(), ns+"-echo", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	out = apply(t, c, echo("hello"))
	if out.Reason != helm.ReasonObjectMissing || out.Missing != "ClusterRole/"+ns+"-echo" || out.Revision != 3 {
		t.Errorf("outcome = %+v, want revision 3 for %s ClusterRole/%s-echo", out, helm.ReasonObjectMissing, ns)
	}
	if _, err := cs.RbacV1().ClusterRoles().Get(t.Context(), ns+"-echo", metav1.GetOptions{}); err != nil {
		t.Errorf("cluster-scoped object not restored: %v", err)
	}
	if out := apply(t, c, echo("hello")); !out.Skipped || out.Revision != 3 {
		t.Errorf("apply after restore = %+v, want skipped at revision 3", out)
	}
}

func TestUninstall(t *testing.T) {
	ns := cp.Namespace(t)
	c := newClient(t, ns)
	apply(t, c, echo("hello"))
	cs := cp.Clientset(t)

	existed, err := c.Uninstall(t.Context(), "echo")
	if err != nil || !existed {
		t.Fatalf("Uninstall = %v, %v; want true, nil", existed, err)
	}
	eventually(t, "ConfigMap after uninstall", gone(func() error {
		_, err := cs.CoreV1().ConfigMaps(ns).Get(t.Context(), "echo", metav1.GetOptions{})
		return err
	}))
	eventually(t, "ClusterRole after uninstall", gone(func() error {
		_, err := cs.RbacV1().ClusterRoles().Get(t.Context(), ns+"-echo", metav1.GetOptions{})
		return err
	}))
	if _, err := c.Status(t.Context(), "echo"); !errors.Is(err, helm.ErrNotFound) {
		t.Errorf("Status after uninstall: err = %v, want ErrNotFound", err)
	}
	if existed, err := c.Uninstall(t.Context(), "echo"); err != nil || existed {
		t.Errorf("second Uninstall = %v, %v; want false, nil", existed, err)
	}
}

func TestRenderSeesTheCluster(t *testing.T) {
	ns := cp.Namespace(t)
	// Created before the probe API exists: capabilities must not be cached
	// for the Client's lifetime.
	c := newClient(t, ns)
	createProbeAPI(t)

	rendered, err := c.Render(t.Context(), echo("hello"))
	if err != nil {
		t.Fatalf("render before install: %v", err)
	}
	nsObj, err := cp.Clientset(t).CoreV1().Namespaces().Get(t.Context(), ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"kubeVersion": cp.Version, "hasProbeAPI": "true", "namespaceUID": string(nsObj.UID)}
	if diff := cmp.Diff(want, manifestConfigMap(t, rendered.Manifest, "echo-capabilities").Data); diff != "" {
		t.Errorf("what the chart saw while rendering (-want +got):\n%s", diff)
	}
	if len(rendered.Hooks) != 1 || !strings.Contains(rendered.Hooks[0], "name: echo-hook") {
		t.Errorf("rendered hooks = %q, want the echo-hook ConfigMap", rendered.Hooks)
	}

	out := apply(t, c, echo("hello"))
	if out.Checksum != rendered.Checksum {
		t.Errorf("install checksum %s differs from the render before it, %s", out.Checksum, rendered.Checksum)
	}
	if diff := cmp.Diff(want, configMap(t, ns, "echo-capabilities").Data); diff != "" {
		t.Errorf("what the chart saw while installing (-want +got):\n%s", diff)
	}
	again, err := c.Render(t.Context(), echo("hello"))
	if err != nil {
		t.Fatalf("render after install: %v", err)
	}
	if again.Checksum != rendered.Checksum {
		t.Errorf("render after install: checksum %s, want %s as before", again.Checksum, rendered.Checksum)
	}
}

// createProbeAPI serves probes.e2e.addon-operator.io/v1 through a CRD and
// waits until discovery lists it.
func createProbeAPI(t *testing.T) {
	t.Helper()
	crd := map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": "probes.probes.e2e.addon-operator.io"},
		"spec": map[string]any{
			"group": "probes.e2e.addon-operator.io",
			"names": map[string]any{"kind": "Probe", "plural": "probes"},
			"scope": "Namespaced",
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object"}},
			}},
		},
	}
	createUnstructured(t, schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}, crd)
	discovery := cp.Clientset(t).Discovery()
	eventually(t, "probe API in discovery", func() error {
		_, err := discovery.ServerResourcesForGroupVersion("probes.e2e.addon-operator.io/v1")
		return err
	})
}

func TestOwnedSkipsForeignReleases(t *testing.T) {
	ns := cp.Namespace(t)
	c := newClient(t, ns)
	apply(t, c, echo("hello"))

	install := action.NewInstall(helmConfig(t, ns))
	install.ReleaseName, install.Namespace = "foreign", ns
	foreign := &chart.Chart{
		Metadata: &chart.Metadata{APIVersion: chart.APIVersionV2, Name: "foreign", Version: "1.0.0"},
		Templates: []*chart.File{{Name: "templates/cm.yaml", Data: []byte(
			"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: foreign\n")}},
	}
	if _, err := install.RunWithContext(t.Context(), foreign, nil); err != nil {
		t.Fatalf("install foreign release: %v", err)
	}

	owned, err := c.Owned(t.Context())
	if err != nil {
		t.Fatalf("Owned: %v", err)
	}
	if diff := cmp.Diff([]string{"echo"}, owned); diff != "" {
		t.Errorf("owned releases (-want +got):\n%s", diff)
	}
	status, err := c.Status(t.Context(), "foreign")
	if err != nil || status.Owned || status.State != "deployed" {
		t.Errorf("Status(foreign) = %+v, %v; want deployed, not owned", status, err)
	}
}

func TestApplyRecoversPendingUpgrade(t *testing.T) {
	ns := cp.Namespace(t)
	c := newClient(t, ns)
	apply(t, c, echo("hello"))

	// What a process killed in the middle of an upgrade leaves behind.
	cfg := helmConfig(t, ns)
	last, err := cfg.Releases.Last("echo")
	if err != nil {
		t.Fatal(err)
	}
	pending := *last
	info := *last.Info
	pending.Info, pending.Version = &info, 2
	pending.SetStatus(release.StatusPendingUpgrade, "killed mid-upgrade by the test")
	if err := cfg.Releases.Create(&pending); err != nil {
		t.Fatalf("record pending revision: %v", err)
	}
	upgrade := action.NewUpgrade(cfg)
	upgrade.Namespace = ns
	if _, err := upgrade.RunWithContext(t.Context(), "echo", last.Chart, last.Config); err == nil {
		t.Fatal("plain Helm upgraded over a pending revision; the test does not reproduce the problem")
	}

	out := apply(t, c, echo("hello"))
	if !out.Recovered || out.Reason != helm.ReasonNotDeployed || out.Revision != 3 {
		t.Errorf("outcome = %+v, want recovered, %s, revision 3", out, helm.ReasonNotDeployed)
	}
	interrupted, err := cfg.Releases.Get("echo", 2)
	if err != nil {
		t.Fatal(err)
	}
	if interrupted.Info.Status != release.StatusFailed {
		t.Errorf("interrupted revision is %s, want failed", interrupted.Info.Status)
	}
	if out := apply(t, c, echo("hello")); !out.Skipped || out.Revision != 3 {
		t.Errorf("apply after recovery = %+v, want skipped at revision 3", out)
	}
}

func TestClientFromKubeconfig(t *testing.T) {
	ns := cp.Namespace(t)
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &cp.Kubeconfig // its context has no namespace: objects must still land in ns
	c, err := helm.New(helm.Options{Getter: flags, Namespace: ns})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if out := apply(t, c, echo("hello")); out.Revision != 1 {
		t.Errorf("install outcome = %+v, want revision 1", out)
	}
	configMap(t, ns, "echo")
	if out := apply(t, c, echo("hello")); !out.Skipped {
		t.Errorf("second apply = %+v, want skipped", out)
	}
}
