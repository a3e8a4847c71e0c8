package helm

import (
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/addon-operator/addon-operator/pkg/helm"
	"github.com/addon-operator/addon-operator/pkg/kube"
	"github.com/addon-operator/addon-operator/pkg/kube/readiness"
	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/release"
)

// requestLog records the requests that reach the API server through a
// rest.Config: verb (GET of one object, LIST, POST...), path and status.
type requestLog struct {
	mu   sync.Mutex
	reqs []string
}

func (l *requestLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		code := "<error>"
		if err == nil {
			code = fmt.Sprint(resp.StatusCode)
		}
		line := verbOf(req) + " " + req.URL.Path
		if req.URL.RawQuery != "" {
			line += "?" + req.URL.RawQuery
		}
		l.mu.Lock()
		l.reqs = append(l.reqs, line+" "+code)
		l.mu.Unlock()
		return resp, err //nolint:wrapcheck // a transport passes errors on as they are
	})
}

// verbOf tells a LIST (a GET of a collection) from a GET of one object,
// for the core and named API groups.
func verbOf(req *http.Request) string {
	if req.Method != http.MethodGet {
		return req.Method
	}
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	// api/v1/<res>[/<name>], api/v1/namespaces/<ns>/<res>[/<name>],
	// apis/<group>/<version>/... likewise.
	if len(parts) > 0 && parts[0] == "apis" {
		parts = parts[1:]
	}
	if len(parts) >= 2 {
		parts = parts[2:]
	}
	if len(parts) >= 2 && parts[0] == "namespaces" && len(parts) != 2 {
		parts = parts[2:]
	}
	if len(parts)%2 == 1 {
		return "LIST"
	}
	return "GET"
}

// take returns the requests recorded since the last take.
func (l *requestLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	reqs := l.reqs
	l.reqs = nil
	return reqs
}

// perVerb counts requests by verb and status: "GET 404", "POST 201"...
func perVerb(reqs []string) map[string]int {
	n := map[string]int{}
	for _, r := range reqs {
		f := strings.Fields(r)
		n[f[0]+" "+f[len(f)-1]]++
	}
	return n
}

// fourObjects is the template of the benchmark's module shape: a
// ConfigMap, a Secret, a ServiceAccount and a headless Service, the first
// two with .Values.note.
const fourObjects = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}
data:
  note: {{ .Values.note | quote }}
---
apiVersion: v1
kind: Secret
metadata:
  name: {{ .Release.Name }}
stringData:
  note: {{ .Values.note | quote }}
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ .Release.Name }}
---
apiVersion: v1
kind: Service
metadata:
  name: {{ .Release.Name }}
spec:
  clusterIP: None
  selector:
    app: {{ .Release.Name }}
  ports:
  - name: http
    port: 80
`

// fourObjectModules writes a modules directory of two modules of the
// benchmark's shape, each a chart of a ConfigMap, a Secret, a
// ServiceAccount and a headless Service.
func fourObjectModules(t *testing.T) *module.Set {
	t.Helper()
	dir := t.TempDir()
	for _, m := range []string{"010-warm", "020-four"} {
		writeFile(t, filepath.Join(dir, m), "templates/objects.yaml", fourObjects)
	}
	set, err := module.Discover(module.Options{ModulesDirs: []string{dir}})
	if err != nil {
		t.Fatalf("discover modules: %v", err)
	}
	return set
}

// recordedReleases is the release manager wired as the operator wires it
// (one shared discovery cache, the Helm client, readiness checks), with
// every request it sends recorded.
func recordedReleases(t *testing.T, ns string) (*release.Manager, *requestLog) {
	t.Helper()
	log := &requestLog{}
	cfg := rest.CopyConfig(cp.Config)
	cfg.Wrap(log.wrap)
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelInfo}))
	disc := kube.NewDiscovery(client.Discovery(), 0, clock.RealClock{})
	c, err := helm.New(helm.Options{
		RESTConfig: cfg, Namespace: ns, Timeout: time.Minute,
		Discovery: disc.Client(), Mapper: disc.RESTMapper(), Logger: logger,
		// The server's versions are read again every DiscoveryMaxAge (10s
		// by default), whatever the number of installs; not per install,
		// so not counted here, however slow the machine.
		DiscoveryMaxAge: time.Hour,
	})
	if err != nil {
		t.Fatalf("new helm client: %v", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return release.New(release.Options{
		Releases: c, Readiness: readiness.NewChecker(dyn, disc.Resolver(), clock.RealClock{}), ReadinessTimeout: time.Minute,
		Namespace: ns, Clock: clock.RealClock{}, Logger: logger,
	}), log
}

// TestModuleInstallRequests pins the requests one module install of four
// objects sends: the release records' LIST, the release record's POST
// (pending-install), the objects' POSTs (the create is the ownership
// check: no object is read first), the record's PUT (deployed); readiness
// reads none of these kinds after creating them. An upgrade (one read of each object,
// two patches, the records' writes) and the uninstall are pinned too.
func TestModuleInstallRequests(t *testing.T) {
	ns := cp.Namespace(t)
	releases, log := recordedReleases(t, ns)
	set := fourObjectModules(t)
	deploy := func(name, note string) []string {
		t.Helper()
		m, ok := set.Module(name)
		if !ok {
			t.Fatalf("no module %s", name)
		}
		_, wait, err := releases.Deploy(t.Context(), m, map[string]any{"note": note})
		if err != nil {
			t.Fatalf("deploy %s: %v", name, err)
		}
		if wait != nil { // as a module run does, parked
			if err := wait(t.Context()); err != nil {
				t.Fatalf("deploy %s: readiness: %v", name, err)
			}
		}
		return log.take()
	}
	deploy("warm", "x") // fills the discovery cache, as the first modules of a converge do
	tests := []struct {
		name, note string
		want       map[string]int
	}{
		{"install", "x", map[string]int{"LIST 200": 1, "POST 201": 5, "PUT 200": 1}},
		// Helm reads each object once (its repeated reads are answered
		// from the first) and patches the two that changed; readiness
		// reads the ServiceAccount and the Service.
		{"upgrade", "y", map[string]int{"LIST 200": 1, "POST 201": 1, "GET 200": 6, "PATCH 200": 2, "PUT 200": 2}},
		// Up to date: the skip check reads each object (no watch here to
		// answer it); readiness reads none, as every object was just seen.
		{"up to date", "y", map[string]int{"LIST 200": 1, "GET 200": 4}},
	}
	for _, tt := range tests {
		reqs := deploy("four", tt.note)
		t.Logf("%s: %d requests:\n%s", tt.name, len(reqs), strings.Join(reqs, "\n"))
		if diff := cmp.Diff(tt.want, perVerb(reqs)); diff != "" {
			t.Errorf("%s: requests per verb and code (-want +got):\n%s", tt.name, diff)
		}
	}
	if err := releases.Uninstall(t.Context(), "four"); err != nil {
		t.Fatalf("uninstall: %v", err)
	}
	reqs := log.take()
	t.Logf("uninstall: %d requests:\n%s", len(reqs), strings.Join(reqs, "\n"))
	// Helm's driver reads each record before it deletes it.
	if diff := cmp.Diff(map[string]int{"LIST 200": 1, "PUT 200": 1, "DELETE 200": 6, "GET 200": 2}, perVerb(reqs)); diff != "" {
		t.Errorf("uninstall: requests per verb and code (-want +got):\n%s", diff)
	}
}
