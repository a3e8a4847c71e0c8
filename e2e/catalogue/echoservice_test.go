package catalogue

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// deployment returns echo-service's Deployment, nil when it does not exist.
func (h *harness) deployment() *appsv1.Deployment {
	h.T.Helper()
	d, err := h.Client.AppsV1().Deployments(h.Namespace).Get(h.T.Context(), "echo-service", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		h.T.Fatal(err)
	}
	return d
}

// missing returns the wanted substrings that s lacks.
func missing(s string, want ...string) []string {
	var out []string
	for _, w := range want {
		if !strings.Contains(s, w) {
			out = append(out, w)
		}
	}
	return out
}

func TestEchoService(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.SetConfig(map[string]string{
		"echoServiceEnabled":       "true",
		"namespaceDefaultsEnabled": "false",
		"echoService": "replicas: 2\nmessage: hi there\nservice:\n  type: NodePort\n" +
			"routes:\n  /healthz: {body: ok}\n  /teapot: {body: short and stout, status: 418, contentType: text/html}\n",
	})
	h.start()
	h.WaitReady()

	checksum := checkEchoObjects(t, h)

	// A change of the section upgrades the release and rolls the pods.
	h.SetConfig(map[string]string{
		"echoServiceEnabled":       "true",
		"namespaceDefaultsEnabled": "false",
		"echoService":              "replicas: 2\nlogLevel: debug\nroutes:\n  /healthz: {body: ok}\n",
	})
	h.Poll("logLevel debug in default.conf", func() bool {
		return strings.Contains(h.ConfigMapData("echo-service")["default.conf"], "error_log /dev/stderr debug;")
	})
	conf := h.ConfigMapData("echo-service")["default.conf"]
	if strings.Contains(conf, "/teapot") || !strings.Contains(conf, `return 200 "hello from echo-service\n";`) {
		t.Errorf("default.conf after dropping /teapot and message:\n%s", conf)
	}
	h.Poll("a new checksum/config", func() bool {
		return h.deployment().Spec.Template.Annotations["checksum/config"] != checksum
	})
	if rev := h.ReleaseRevision("echo-service"); rev != 2 {
		t.Errorf("release revision %d, want 2", rev)
	}

	// Values outside the schema are rejected, naming each key; the last
	// valid ConfigMap stays in force.
	h.SetConfig(map[string]string{
		"echoServiceEnabled":       "true",
		"namespaceDefaultsEnabled": "false",
		"echoService":              "logLevel: loud\ninternal: {listenPort: 1}\n",
	})
	// Users may not set internal values: the rejection names both keys.
	h.WaitCondition(status.ConditionConfigMapInvalid, "echoService.logLevel must be one of", "echoService.internal")
	if rev := h.ReleaseRevision("echo-service"); rev != 2 {
		t.Errorf("release revision %d after an invalid ConfigMap, want 2", rev)
	}

	// Disabled in the ConfigMap: the release is uninstalled.
	h.SetConfig(map[string]string{"echoServiceEnabled": "false", "namespaceDefaultsEnabled": "false"})
	h.Poll("the Deployment to be gone", func() bool { return h.deployment() == nil })
	if f := h.failures(); len(f) != 0 {
		t.Errorf("failed tasks or module runs: %q, want none", f)
	}
}

// checkEchoObjects checks the objects TestEchoService's first ConfigMap
// makes and returns the Deployment's config checksum.
func checkEchoObjects(t *testing.T, h *harness) (checksum string) {
	t.Helper()
	// The Deployment: replicas from the ConfigMap, the image from the
	// module's values.yaml, the port from the values schema's default.
	d := h.deployment()
	if d == nil {
		t.Fatal("no echo-service Deployment")
	}
	c := d.Spec.Template.Spec.Containers[0]
	got := map[string]any{
		"replicas": *d.Spec.Replicas, "image": c.Image, "port": c.Ports[0].ContainerPort,
		"managed-by": d.Labels["addon-operator.io/managed-by"], "heritage": d.Labels["heritage"], "module": d.Labels["addon-operator.io/module"],
	}
	want := map[string]any{
		"replicas": int32(2), "image": "nginxinc/nginx-unprivileged:1.27-alpine", "port": int32(8080),
		"managed-by": "addon-operator", "heritage": "", "module": "echo-service",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Deployment (-want +got):\n%s", diff)
	}
	checksum = d.Spec.Template.Annotations["checksum/config"]
	if len(checksum) != 64 {
		t.Errorf("checksum/config annotation %q, want a sha256", checksum)
	}

	// The Service: the type from the ConfigMap, the port a config default.
	svc, err := h.Client.CoreV1().Services(h.Namespace).Get(t.Context(), "echo-service", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p := svc.Spec.Ports[0]; svc.Spec.Type != "NodePort" || p.Port != 80 || p.TargetPort.String() != "http" {
		t.Errorf("Service: type %s, port %d -> %s; want NodePort, 80 -> http", svc.Spec.Type, p.Port, p.TargetPort.String())
	}

	// nginx's configuration: defaults of the enum (logLevel) and under
	// patternProperties (status, contentType) filled in.
	conf := h.ConfigMapData("echo-service")["default.conf"]
	if m := missing(conf,
		"listen 8080;", "error_log /dev/stderr warn;", `return 200 "hi there\n";`,
		"location = /healthz {\n    default_type text/plain;\n    return 200 \"ok\";",
		"location = /teapot {\n    default_type text/html;\n    return 418 \"short and stout\";",
	); len(m) != 0 {
		t.Errorf("default.conf lacks %q:\n%s", m, conf)
	}
	return checksum
}

// The image comes from the module's values.yaml, not from a schema
// default: deleting it in the ConfigMap fails the run before Helm
// (x-required-for-helm) instead of deploying a Deployment without one.
func TestEchoServiceRequiresImage(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.SetConfig(map[string]string{"echoServiceEnabled": "true", "namespaceDefaultsEnabled": "false", "echoService": "image: null\n"})
	h.start()
	h.WaitModule("echo-service", "last error names echoService.image", operatortest.ErrorContains("echoService.image"))
	if h.deployment() != nil || h.ReleaseRevision("echo-service") != 0 {
		t.Error("echo-service deployed without an image")
	}
	// Giving the key back lets the retry succeed.
	h.SetConfig(map[string]string{"echoServiceEnabled": "true", "namespaceDefaultsEnabled": "false", "echoService": "image: nginx:1.27\n"})
	h.Poll("the Deployment", func() bool { return h.deployment() != nil })
	if img := h.deployment().Spec.Template.Spec.Containers[0].Image; img != "nginx:1.27" {
		t.Errorf("image %q, want the ConfigMap's nginx:1.27", img)
	}
}
