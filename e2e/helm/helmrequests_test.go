package helm

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"

	"github.com/addon-operator/addon-operator/pkg/helm"
)

// plainHelm is Helm's own install and upgrade, with nothing of pkg/helm:
// Helm's kube client and Secrets driver over a kubeconfig, every request
// recorded.
func plainHelm(t *testing.T, ns string) (*action.Configuration, *requestLog) {
	t.Helper()
	log := &requestLog{}
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &cp.Kubeconfig
	cacheDir := t.TempDir()
	flags.CacheDir = &cacheDir
	flags.Namespace = &ns
	flags.WrapConfigFn = func(c *rest.Config) *rest.Config {
		c.Wrap(log.wrap)
		return c
	}
	cfg := new(action.Configuration)
	if err := cfg.Init(flags, ns, "secret", func(string, ...any) {}); err != nil {
		t.Fatalf("init helm: %v", err)
	}
	cfg.Releases.MaxHistory = helm.DefaultHistoryMax
	return cfg, log
}

func fourObjectChart(name string) *chart.Chart {
	return &chart.Chart{
		Metadata:  &chart.Metadata{APIVersion: chart.APIVersionV2, Name: name, Version: "0.1.0"},
		Templates: []*chart.File{{Name: "templates/objects.yaml", Data: []byte(fourObjects)}},
	}
}

// TestHelmRequestsTheSavingsAnswer records the requests Helm's own install
// and upgrade send (helm.sh/helm/v3 as in go.mod), and holds them to what
// each request saving of pkg/helm answers or skips (docs/helm-requests.md):
//
//   - Install and Upgrade call KubeClient.IsReachable, a GET /version
//     (kubeclient.Client answers it without a request);
//   - Install reads each object before creating it, GET 404
//     (existingResourceConflict; requests.KnownAbsent answers it);
//   - Install lists the release's storage records twice before it writes
//     its first one (availableName, then Storage.Create's pruning with
//     MaxHistory set), Upgrade twice too (Storage.Last, the pruning);
//     requests.OperationStore answers them from the operation's first LIST;
//   - Upgrade reads an object it patches twice (kube.Client.update, then
//     createPatch) and one it leaves alone three times (the third,
//     Info.Get, after an empty patch), with no write of it in between
//     (requests.RepeatedReads answers the repeats).
//
// When Helm changes one of these, this test fails, and the saving that
// relies on it saves nothing or answers a read it should not.
func TestHelmRequestsTheSavingsAnswer(t *testing.T) {
	ns := cp.Namespace(t)
	cfg, log := plainHelm(t, ns)
	install := func(name string) []string {
		t.Helper()
		in := action.NewInstall(cfg)
		in.ReleaseName, in.Namespace = name, ns
		if _, err := in.Run(fourObjectChart(name), map[string]any{"note": "x"}); err != nil {
			t.Fatalf("install %s: %v", name, err)
		}
		return log.take()
	}
	install("warm") // fills the discovery and mapper caches
	objects := func(name string) []string {
		return []string{
			"/api/v1/namespaces/" + ns + "/configmaps/" + name,
			"/api/v1/namespaces/" + ns + "/secrets/" + name,
			"/api/v1/namespaces/" + ns + "/serviceaccounts/" + name,
			"/api/v1/namespaces/" + ns + "/services/" + name,
		}
	}
	records := "LIST /api/v1/namespaces/" + ns + "/secrets?labelSelector=name%3Dfour%2Cowner%3Dhelm 200"

	reqs := install("four")
	t.Logf("install: %d requests:\n%s", len(reqs), strings.Join(reqs, "\n"))
	if n := count(reqs, "LIST /version 200"); n != 1 {
		t.Errorf("install: %d GET /version, want 1 (Install.Run's KubeClient.IsReachable)", n)
	}
	firstRecordWrite := slices.IndexFunc(reqs, isRecordPost(ns))
	if firstRecordWrite < 0 {
		t.Fatal("install: no POST of the release record")
	}
	if n := count(reqs[:firstRecordWrite], records); n != 2 {
		t.Errorf("install: %d LISTs of the release's records before its first write, want 2 (availableName, Storage.Create's pruning)", n)
	}
	for _, path := range objects("four") {
		get := slices.Index(reqs, "GET "+path+" 404")
		post := slices.IndexFunc(reqs, func(r string) bool {
			return strings.HasPrefix(r, "POST "+path[:strings.LastIndex(path, "/")]+"?") // the object's create, with its field manager
		})
		if get < 0 || post < 0 || get > post || count(reqs, "GET "+path+" 404") != 1 {
			t.Errorf("install: want one GET %s (404) before its create (existingResourceConflict); got GET at %d, POST at %d", path, get, post)
		}
	}

	up := action.NewUpgrade(cfg)
	up.Namespace, up.MaxHistory = ns, helm.DefaultHistoryMax // as the Client's upgrades
	if _, err := up.Run("four", fourObjectChart("four"), map[string]any{"note": "y"}); err != nil {
		t.Fatalf("upgrade: %v", err)
	}
	reqs = log.take()
	t.Logf("upgrade: %d requests:\n%s", len(reqs), strings.Join(reqs, "\n"))
	if n := count(reqs, "LIST /version 200"); n != 1 {
		t.Errorf("upgrade: %d GET /version, want 1 (Upgrade.Run's KubeClient.IsReachable)", n)
	}
	if n := count(reqs[:max(0, slices.IndexFunc(reqs, isRecordPost(ns)))], records); n != 2 {
		t.Errorf("upgrade: %d LISTs of the release's records before its first write, want 2 (Storage.Last, Storage.Create's pruning)", n)
	}
	// The ConfigMap and the Secret carry the note and are patched; the
	// ServiceAccount and the Service are not.
	want := map[string][]string{}
	got := map[string][]string{}
	for i, path := range objects("four") {
		want[path] = []string{"GET 200", "GET 200", "PATCH 200"}
		if i >= 2 {
			want[path] = []string{"GET 200", "GET 200", "GET 200"}
		}
		for _, r := range reqs {
			f := strings.Fields(r)
			if p, _, _ := strings.Cut(f[1], "?"); p == path {
				got[path] = append(got[path], f[0]+" "+f[2])
			}
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("upgrade: requests of each object (-want +got):\n%s", diff)
	}
}

// isRecordPost reports whether a request is the POST of a release record
// (a Secret created without a field manager, unlike the chart's objects).
func isRecordPost(ns string) func(string) bool {
	return func(r string) bool { return strings.HasPrefix(r, "POST /api/v1/namespaces/"+ns+"/secrets ") }
}

// count returns how many of reqs are want.
func count(reqs []string, want string) int {
	n := 0
	for _, r := range reqs {
		if r == want {
			n++
		}
	}
	return n
}
