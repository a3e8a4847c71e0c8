package cluster

import (
	"bytes"
	"context"
	"crypto/tls"
	_ "embed" // the kwok stages
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// Workloads configure what Start runs beside etcd and the API server so
// that workloads become ready: kube-controller-manager (the controllers
// that make workloads, namespaces and garbage collection work), kube-scheduler, and kwok, which simulates nodes. What is
// real: the controllers and the scheduler, as in any cluster. What is
// simulated: the nodes. kwok moves each Pod bound to one through the states
// a kubelet would report (IPs, Running, Ready, and for Pods that run to
// completion Succeeded or Failed) without running a container: no image is
// pulled, no process runs, no network reaches a Pod, no probe is run, and
// volumes are not mounted.
type Workloads struct {
	// PodStartDelay is how long a bound Pod stays Pending before its
	// containers run and are ready, as an image pull and a container start
	// would take. A Pod's AnnotationStartDelay overrides it.
	PodStartDelay time.Duration
	// Nodes is how many simulated nodes to register; zero means one. They
	// are named kwok-node-0, kwok-node-1, ... and have no taints, and room
	// for a million Pods each.
	Nodes int
}

// Annotations on a Pod (in a Deployment's or Job's Pod template) that change
// how its simulated node treats it.
const (
	// AnnotationStartDelay overrides Workloads.PodStartDelay for the Pod: a
	// Go duration ("5s").
	AnnotationStartDelay = "simulation.addon-operator.io/start-delay"
	// AnnotationRunDuration is how long a Pod that runs to completion
	// (restartPolicy Never or OnFailure, as a Job's) runs once ready before
	// it exits: a Go duration, default zero. "24h" makes a Job that never
	// finishes within a test.
	AnnotationRunDuration = "simulation.addon-operator.io/run-duration"
	// AnnotationExitCode is the exit code of such a Pod's containers: "0"
	// (the default) makes the Pod Succeeded, anything else Failed.
	AnnotationExitCode = "simulation.addon-operator.io/exit-code"
)

// controllers are the controllers kube-controller-manager runs: those that
// make workloads, namespaces and garbage collection work. Node lifecycle,
// IPAM, volumes, certificates and cloud controllers are left out: there is
// no real node, volume or cloud for them to manage.
const controllers = "deployment-controller,replicaset-controller,statefulset-controller," +
	"daemonset-controller,job-controller,cronjob-controller,ttl-after-finished-controller," +
	"replicationcontroller-controller,disruption-controller,pod-garbage-collector-controller," +
	"namespace-controller,garbage-collector-controller," +
	"endpoints-controller,endpointslice-controller,endpointslice-mirroring-controller," +
	"serviceaccount-controller,serviceaccount-token-controller,clusterrole-aggregation-controller"

//go:embed kwok-stages.yaml
var kwokStages string

// nodeAnnotation marks the nodes kwok manages, as kwok's documentation does.
const nodeAnnotation = "kwok.x-k8s.io/node"

// clientQPS is the request rate the controllers and the scheduler may use.
// Their defaults (20 and 50 a second) would make them, not the operator
// under test, the bottleneck of a benchmark that deploys a thousand modules.
const clientQPS, clientBurst = "2000", "4000"

// startWorkloads starts kube-controller-manager, kube-scheduler and kwok
// against the running API server, registers the simulated nodes and waits
// until the nodes are ready.
func (cp *ControlPlane) startWorkloads(ctx context.Context, w Workloads) error {
	bins := cp.opts.Binaries.Workloads
	if bins.KubeControllerManager == "" || bins.KubeScheduler == "" || bins.Kwok == "" {
		return errors.New("workloads requested but their binaries are not built: set Binaries.Workloads from BuildWorkloads")
	}
	ports, err := freePorts(ctx, 2)
	if err != nil {
		return err
	}
	insecure := &http.Client{Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // health probe of a self-signed loopback server
	}}
	healthz := func(port int) func(context.Context) error {
		return func(ctx context.Context) error {
			return waitHTTP(ctx, insecure, "https://127.0.0.1:"+strconv.Itoa(port)+"/healthz", "")
		}
	}
	kcm := &server{name: "kube-controller-manager", bin: bins.KubeControllerManager, args: []string{
		"--kubeconfig=" + cp.Kubeconfig,
		"--authentication-kubeconfig=" + cp.Kubeconfig,
		"--authorization-kubeconfig=" + cp.Kubeconfig,
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(ports[0]),
		"--cert-dir=" + filepath.Join(cp.Dir, "kube-controller-manager"),
		"--leader-elect=false",
		"--controllers=" + controllers,
		"--service-account-private-key-file=" + filepath.Join(cp.Dir, "sa.key"),
		"--root-ca-file=" + filepath.Join(cp.Dir, "certs", "apiserver.crt"),
		"--kube-api-qps=" + clientQPS, "--kube-api-burst=" + clientBurst,
	}, ready: healthz(ports[0])}
	scheduler := &server{name: "kube-scheduler", bin: bins.KubeScheduler, args: []string{
		"--kubeconfig=" + cp.Kubeconfig,
		"--authentication-kubeconfig=" + cp.Kubeconfig,
		"--authorization-kubeconfig=" + cp.Kubeconfig,
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(ports[1]),
		"--cert-dir=" + filepath.Join(cp.Dir, "kube-scheduler"),
		"--leader-elect=false",
		"--kube-api-qps=" + clientQPS, "--kube-api-burst=" + clientBurst,
	}, ready: healthz(ports[1])}
	for _, s := range []*server{kcm, scheduler} {
		cp.servers = append(cp.servers, s)
		if err := cp.startServer(ctx, s); err != nil {
			return err
		}
	}

	client, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		return fmt.Errorf("client for nodes: %w", err)
	}
	nodes, err := registerNodes(ctx, client, max(w.Nodes, 1))
	if err != nil {
		return err
	}
	config, err := cp.writeKwokConfig(w)
	if err != nil {
		return err
	}
	kwok := &server{name: "kwok", bin: bins.Kwok, args: []string{
		"--kubeconfig=" + cp.Kubeconfig,
		"--config=" + config,
		"--manage-nodes-with-annotation-selector=" + nodeAnnotation + "=fake",
		"--cidr=10.244.0.0/16", "--node-ip=127.0.0.1",
	}, ready: func(ctx context.Context) error {
		if err := waitNodesReady(ctx, client, nodes); err != nil {
			return err
		}
		return untaintNodes(ctx, client, nodes)
	}}
	cp.servers = append(cp.servers, kwok)
	return cp.startServer(ctx, kwok)
}

// writeKwokConfig renders the stages with w's delays into Dir/kwok.yaml.
func (cp *ControlPlane) writeKwokConfig(w Workloads) (string, error) {
	tmpl, err := template.New("stages").Delims("[[", "]]").Parse(kwokStages)
	if err != nil {
		return "", fmt.Errorf("parse kwok stages: %w", err)
	}
	var b bytes.Buffer
	if err := tmpl.Execute(&b, map[string]int64{"PodStartDelayMilliseconds": w.PodStartDelay.Milliseconds()}); err != nil {
		return "", fmt.Errorf("render kwok stages: %w", err)
	}
	path := filepath.Join(cp.Dir, "kwok.yaml")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		return "", fmt.Errorf("write kwok stages: %w", err)
	}
	return path, nil
}

// registerNodes creates n simulated nodes (kept when they exist) and
// returns their names.
func registerNodes(ctx context.Context, client kubernetes.Interface, n int) ([]string, error) {
	names := make([]string, n)
	for i := range n {
		name := "kwok-node-" + strconv.Itoa(i)
		names[i] = name
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{nodeAnnotation: "fake"},
			Labels: map[string]string{
				"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
				"type": "kwok",
			},
		}}
		if _, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("register node %s: %w", name, err)
		}
	}
	return names, nil
}

// waitNodesReady polls until every named node reports Ready, which kwok's
// node stage sets once kwok runs.
func waitNodesReady(ctx context.Context, client kubernetes.Interface, names []string) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		pending, err := notReady(ctx, client, names)
		if err == nil && len(pending) == 0 {
			return nil
		}
		if err == nil {
			err = fmt.Errorf("nodes not ready: %s", strings.Join(pending, ", "))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w; last: %w", ctx.Err(), err)
		case <-tick.C:
		}
	}
}

func notReady(ctx context.Context, client kubernetes.Interface, names []string) ([]string, error) {
	var pending []string
	for _, name := range names {
		node, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("get node %s: %w", name, err)
		}
		ready := false
		for _, c := range node.Status.Conditions {
			ready = ready || c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue
		}
		if !ready {
			pending = append(pending, name)
		}
	}
	return pending, nil
}

// notReadyTaint is the taint the API server's TaintNodesByCondition
// admission puts on every new node. The node lifecycle controller removes
// it once the node is Ready; that controller is not run (it would evict
// Pods from nodes without kubelet heartbeats), so this does it.
const notReadyTaint = "node.kubernetes.io/not-ready"

// untaintNodes removes notReadyTaint from the named nodes.
func untaintNodes(ctx context.Context, client kubernetes.Interface, names []string) error {
	for _, name := range names {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			node, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			taints := slices.DeleteFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.Key == notReadyTaint })
			if len(taints) == len(node.Spec.Taints) {
				return nil
			}
			node.Spec.Taints = taints
			_, err = client.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			return fmt.Errorf("remove taint %s from node %s: %w", notReadyTaint, name, err)
		}
	}
	return nil
}
