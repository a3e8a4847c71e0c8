package helm

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/release"
	helmtime "helm.sh/helm/v3/pkg/time"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/addon-operator/addon-operator/pkg/helm"
	"github.com/addon-operator/addon-operator/pkg/helm/objects"
)

// pairChart writes a chart without hooks rendering ServiceAccount pair
// and ConfigMap echo; Helm creates the ServiceAccount first.
func pairChart(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, dir, "Chart.yaml", "apiVersion: v2\nname: pair\nversion: 0.1.0\n")
	writeFile(t, dir, "templates/objects.yaml", pairManifest)
	return dir
}

const pairManifest = `apiVersion: v1
kind: ServiceAccount
metadata:
  name: pair
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: echo
data:
  greeting: from-pair
`

func pairRelease(dir string) helm.Release {
	return helm.Release{Name: "pair", ChartDir: dir, Values: map[string]any{"global": map[string]any{}}}
}

// loggedClient is a Client for ns whose requests log records.
func loggedClient(t *testing.T, ns string, log *requestLog) *helm.Client {
	t.Helper()
	cfg := rest.CopyConfig(cp.Config)
	cfg.Wrap(log.wrap)
	c, err := helm.New(helm.Options{RESTConfig: cfg, Namespace: ns, Timeout: time.Minute,
		Logger: slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelInfo}))})
	if err != nil {
		t.Fatalf("new helm client: %v", err)
	}
	return c
}

// requestsTo returns the requests of reqs with verb to paths under
// resource (e.g. "POST", "/serviceaccounts").
func requestsTo(reqs []string, verb, resource string) []string {
	var out []string
	for _, r := range reqs {
		if strings.HasPrefix(r, verb+" ") && strings.Contains(r, resource) {
			out = append(out, r)
		}
	}
	return out
}

// checkHandMadeEcho checks that ConfigMap echo is still as createEcho made
// it: no release's data, annotations or labels.
func checkHandMadeEcho(t *testing.T, ns string) {
	t.Helper()
	cm := configMap(t, ns, "echo")
	if cm.Data["greeting"] != handMade || len(cm.Annotations) != 0 || len(cm.Labels) != 0 {
		t.Errorf("hand-made ConfigMap changed: data %v, annotations %v, labels %v", cm.Data, cm.Annotations, cm.Labels)
	}
}

// serviceAccountGone fails the test unless ServiceAccount ns/name is
// absent.
func serviceAccountGone(t *testing.T, ns, name string) {
	t.Helper()
	_, err := cp.Clientset(t).CoreV1().ServiceAccounts(ns).Get(t.Context(), name, metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("ServiceAccount %s: err = %v, want NotFound", name, err)
	}
}

// A first install creates its objects without reading them; when one is
// in the way, the install is undone and refused as if its objects had been
// checked first, and the retries check before they create.
func TestInstallFindingAnObjectInItsWayIsUndone(t *testing.T) {
	ns := cp.Namespace(t)
	log := &requestLog{}
	c := loggedClient(t, ns, log)
	dir := pairChart(t)
	createEcho(t, ns)

	_, err := c.Apply(t.Context(), pairRelease(dir))
	wantConflict(t, err, "pair", ns, objects.Owner{})
	reqs := log.take()
	t.Logf("first install: %d requests:\n%s", len(reqs), strings.Join(reqs, "\n"))
	if got := requestsTo(reqs, "GET", "/configmaps/echo"); len(got) == 0 {
		t.Errorf("echo was never read: the refusal must come from the ownership check")
	}
	if created, deleted := requestsTo(reqs, "POST", "/serviceaccounts"), requestsTo(reqs, "DELETE", "/serviceaccounts/pair"); len(created) != 1 || len(deleted) != 1 {
		t.Errorf("ServiceAccount pair: creates %v, deletes %v; want it created straight away, then deleted by the undo", created, deleted)
	}
	checkHandMadeEcho(t, ns)
	serviceAccountGone(t, ns, "pair")
	if _, err := c.Status(t.Context(), "pair"); !errors.Is(err, helm.ErrNotFound) {
		t.Errorf("Status after the refusal: err = %v, want no release", err)
	}

	// The retry checks first: it creates nothing while the conflict stays.
	_, err = c.Apply(t.Context(), pairRelease(dir))
	wantConflict(t, err, "pair", ns, objects.Owner{})
	reqs = log.take()
	if posts := requestsTo(reqs, "POST", ""); len(posts) != 0 {
		t.Errorf("retry sent %v, want no create while echo is in the way", posts)
	}
	checkHandMadeEcho(t, ns)

	// The user deletes the hand-made object: the release installs.
	if err := cp.Clientset(t).CoreV1().ConfigMaps(ns).Delete(t.Context(), "echo", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if out := apply(t, c, pairRelease(dir)); out.Revision != 1 || !out.Fresh {
		t.Errorf("apply after the deletion = %+v, want revision 1, fresh", out)
	}
	if cm := configMap(t, ns, "echo"); cm.Data["greeting"] != "from-pair" || cm.Annotations[annotationReleaseName] != "pair" {
		t.Errorf("ConfigMap echo data %v annotations %v, want pair's", cm.Data, cm.Annotations)
	}
}

// A failed revision may name an object its create found in the way (the
// process died before undoing the install, or another writer created the
// object between a check and Helm's create). Such a revision is no proof
// of ownership: deploying over it checks every object, and uninstalling it
// leaves the object to its owner.
func TestFailedRevisionDoesNotOwnWhatItNames(t *testing.T) {
	ns := cp.Namespace(t)
	c := newClient(t, ns)
	dir := pairChart(t)
	createEcho(t, ns)
	// What the failed install created: ServiceAccount pair, Helm-owned.
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{
		Name:        "pair",
		Labels:      map[string]string{"app.kubernetes.io/managed-by": "Helm"},
		Annotations: map[string]string{annotationReleaseName: "pair", "meta.helm.sh/release-namespace": ns},
	}}
	if _, err := cp.Clientset(t).CoreV1().ServiceAccounts(ns).Create(t.Context(), sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ch, err := loader.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	now := helmtime.Now()
	failed := &release.Release{
		Name: "pair", Namespace: ns, Version: 1, Chart: ch, Manifest: pairManifest,
		Config: map[string]any{}, Labels: map[string]string{helm.LabelManagedBy: helm.ManagedByValue},
		Info: &release.Info{Status: release.StatusFailed, FirstDeployed: now, LastDeployed: now,
			Description: `Release "pair" failed: configmaps "echo" already exists`},
	}
	if err := helmConfig(t, ns).Releases.Create(failed); err != nil {
		t.Fatal(err)
	}

	_, err = c.Apply(t.Context(), pairRelease(dir))
	wantConflict(t, err, "pair", ns, objects.Owner{})
	checkHandMadeEcho(t, ns)

	if ok, err := c.Uninstall(t.Context(), "pair"); err != nil || !ok {
		t.Fatalf("uninstall = %v, %v; want the release uninstalled", ok, err)
	}
	checkHandMadeEcho(t, ns)
	serviceAccountGone(t, ns, "pair")
	if _, err := c.Status(t.Context(), "pair"); !errors.Is(err, helm.ErrNotFound) {
		t.Errorf("Status after the uninstall: err = %v, want no release", err)
	}
	left, err := cp.Clientset(t).CoreV1().Secrets(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "owner=helm,name=pair"})
	if err != nil {
		t.Fatal(err)
	}
	if len(left.Items) != 0 {
		t.Errorf("%d release records left, want none", len(left.Items))
	}
}
