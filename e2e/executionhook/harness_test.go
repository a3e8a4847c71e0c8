package executionhook

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"github.com/addon-operator/addon-operator/e2e/kubelet"
	"github.com/addon-operator/addon-operator/e2e/operatortest"
	hooksv1 "github.com/addon-operator/addon-operator/pkg/apis/hooks/v1alpha1"
)

const serviceAccount = "execution-hook-controller"

// repoDir returns the repository's root, found from this file.
func repoDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// moduleDirs copies the module into a modules directory of its own with
// the module enabled, so that no other module of the catalogue reacts to
// the Nodes the tests make; it returns the modules and global hooks dirs.
func moduleDirs(t *testing.T) (modules, globalHooks string) {
	t.Helper()
	modules, globalHooks = t.TempDir(), t.TempDir()
	src := filepath.Join(repoDir(), "modules", "060-execution-hooks")
	if err := os.CopyFS(filepath.Join(modules, "060-execution-hooks"), os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(modules, "values.yaml"), []byte("executionHooksEnabled: false\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return modules, globalHooks
}

// node is a fake kubelet and its Node.
type node struct {
	*kubelet.Kubelet
	name string
}

func startNode(t *testing.T) *node {
	t.Helper()
	k, err := kubelet.Start(t.Context(), cert, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	name := "node-" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))
	if err := k.RegisterNode(t.Context(), cp.Clientset(t), name); err != nil {
		t.Fatal(err)
	}
	return &node{Kubelet: k, name: name}
}

// pod runs a pod with the containers on the node.
func (n *node) pod(t *testing.T, ns, name string, labels map[string]string, containers ...string) {
	t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}}
	if _, err := kubelet.RunPod(t.Context(), cp.Clientset(t), n.name, p, containers...); err != nil {
		t.Fatal(err)
	}
}

// lines returns the words the actions appended to the file runs in a
// container's directory.
func (n *node) lines(t *testing.T, ns, pod, container string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(n.ContainerDir(ns, pod, container), "runs"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(data))
}

// controllerToken returns a token of the module's ServiceAccount in ns.
func controllerToken(t *testing.T, ns string) string {
	t.Helper()
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}
	tr, err := cp.Clientset(t).CoreV1().ServiceAccounts(ns).CreateToken(t.Context(), serviceAccount, req, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token of ServiceAccount %s: %v", serviceAccount, err)
	}
	return tr.Status.Token
}

// kubeconfig writes a kubeconfig with token for the control plane.
func kubeconfig(t *testing.T, token string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{Server: cp.Config.Host, CertificateAuthority: cp.Config.CAFile, CertificateAuthorityData: cp.Config.CAData}
	cfg.AuthInfos["sa"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: "sa"}
	cfg.CurrentContext = "local"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// can reports whether the ServiceAccount may do verb on resource (of the
// core group, or "group/resource"; with subresource) in ns, as the API
// server's authorizer decides.
func can(t *testing.T, saNamespace, verb, resource, subresource, ns string) bool {
	t.Helper()
	group := ""
	if g, r, ok := strings.Cut(resource, "/"); ok {
		group, resource = g, r
	}
	t.Helper()
	review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:   "system:serviceaccount:" + saNamespace + ":" + serviceAccount,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + saNamespace},
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: ns, Verb: verb, Group: group, Resource: resource, Subresource: subresource,
		},
	}}
	out, err := cp.Clientset(t).AuthorizationV1().SubjectAccessReviews().Create(t.Context(), review, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out.Status.Allowed
}

// controller is one run of execution-hook-controller.
type controller struct {
	cmd    *exec.Cmd
	out    *syncBuffer
	exited chan struct{}
}

// startController runs the controller with the module's ServiceAccount,
// acting in namespaces; it is stopped with SIGTERM at cleanup unless
// killed before.
func startController(t *testing.T, e *env, namespaces ...string) *controller {
	t.Helper()
	c := &controller{out: &syncBuffer{}, exited: make(chan struct{})}
	c.cmd = exec.Command(bin, "execution-hook-controller", "--kube-config="+e.kubecfg, //nolint:noctx // stopped by the test or its cleanup
		"--log-type=json", "--log-level=debug", "--metrics-address=127.0.0.1:0", "--namespace="+e.h.Namespace,
		"--namespaces="+strings.Join(namespaces, ","), "--default-action-timeout=20s")
	c.cmd.Stdout, c.cmd.Stderr = c.out, c.out
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = c.cmd.Wait(); close(c.exited) }()
	t.Cleanup(func() {
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-c.exited:
		case <-time.After(operatortest.Timeout):
			t.Errorf("controller did not stop within %s of SIGTERM", operatortest.Timeout)
			_ = c.cmd.Process.Kill()
		}
		if t.Failed() {
			t.Logf("controller output:\n%s", c.out.String())
		}
	})
	return c
}

// kill sends SIGKILL and waits until the process is gone.
func (c *controller) kill() {
	_ = c.cmd.Process.Kill()
	<-c.exited
}

// metricsURL waits for the metrics listener and returns its /metrics URL.
func (c *controller) metricsURL(t *testing.T) string {
	t.Helper()
	addr := ""
	operatortest.Poll(t, "the controller's metrics listener", func() bool {
		sc := bufio.NewScanner(strings.NewReader(c.out.String()))
		for sc.Scan() {
			var l map[string]any
			if json.Unmarshal(sc.Bytes(), &l) == nil && l["msg"] == "metrics listening" {
				addr, _ = l["name"].(string)
			}
		}
		return addr != ""
	})
	return "http://" + addr + "/metrics"
}

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

func dyn(t *testing.T) dynamic.Interface {
	t.Helper()
	d, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// create creates an object of the hooks group from its JSON form.
func create(t *testing.T, gvr schema.GroupVersionResource, ns, manifest string) {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON([]byte(manifest)); err != nil {
		t.Fatalf("%v: %s", err, manifest)
	}
	if _, err := dyn(t).Resource(gvr).Namespace(ns).Create(t.Context(), u, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create %s %s: %v", gvr.Resource, u.GetName(), err)
	}
}

// getHook returns the hook, nil when it is gone.
func getHook(t *testing.T, ns, name string) *hooksv1.ExecutionHook {
	t.Helper()
	u, err := dyn(t).Resource(hooksv1.ExecutionHooksGVR()).Namespace(ns).Get(t.Context(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	b, _ := u.MarshalJSON()
	hook := &hooksv1.ExecutionHook{}
	if err := json.Unmarshal(b, hook); err != nil {
		t.Fatal(err)
	}
	return hook
}

// waitHook waits until the hook satisfies cond and returns it.
func waitHook(t *testing.T, ns, name, what string, cond func(*hooksv1.ExecutionHook) bool) *hooksv1.ExecutionHook {
	t.Helper()
	var hook *hooksv1.ExecutionHook
	operatortest.Poll(t, "ExecutionHook "+name+": "+what, func() bool {
		hook = getHook(t, ns, name)
		return hook != nil && cond(hook)
	})
	return hook
}

func preDone(h *hooksv1.ExecutionHook) bool  { return h.Status.PreActionSucceed != nil }
func postDone(h *hooksv1.ExecutionHook) bool { return h.Status.PostActionSucceed != nil }

func deleteHook(t *testing.T, ns, name string) {
	t.Helper()
	if err := dyn(t).Resource(hooksv1.ExecutionHooksGVR()).Namespace(ns).Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

func waitGone(t *testing.T, ns, name string) {
	t.Helper()
	operatortest.Poll(t, "ExecutionHook "+name+" gone", func() bool { return getHook(t, ns, name) == nil })
}

// eventReasons returns the reasons of the Events about the hook.
func eventReasons(t *testing.T, client kubernetes.Interface, ns, name string) []string {
	t.Helper()
	list, err := client.CoreV1().Events(ns).List(t.Context(), metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, list.Items[i].Reason)
	}
	return out
}

// scrape reads the metrics at url and sums the samples of family name
// whose labels include labels: counters' values, histograms' counts.
func scrape(t *testing.T, url, name string, labels map[string]string) float64 {
	t.Helper()
	code, body, err := operatortest.HTTPGet(t, url)
	if err != nil || code != http.StatusOK {
		t.Fatalf("GET %s: %d, %v", url, code, err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
next:
	for _, m := range families[name].GetMetric() {
		for _, l := range m.GetLabel() {
			if want, ok := labels[l.GetName()]; ok && want != l.GetValue() {
				continue next
			}
		}
		total += m.GetCounter().GetValue() + float64(m.GetHistogram().GetSampleCount())
	}
	return total
}

// table returns the hooks of ns as kubectl get shows them: the column
// names, and the cells of each row by the row's name.
func table(t *testing.T, ns string) (columns []string, rows map[string][]any) {
	t.Helper()
	client, err := rest.HTTPClientFor(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	url := cp.Config.Host + "/apis/" + hooksv1.Group + "/" + hooksv1.Version + "/namespaces/" + ns + "/executionhooks"
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, http.NoBody)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var tbl metav1.Table
	if err := json.NewDecoder(resp.Body).Decode(&tbl); err != nil {
		t.Fatal(err)
	}
	for _, c := range tbl.ColumnDefinitions {
		columns = append(columns, c.Name)
	}
	rows = map[string][]any{}
	for _, r := range tbl.Rows {
		rows[r.Cells[0].(string)] = r.Cells
	}
	return columns, rows
}
