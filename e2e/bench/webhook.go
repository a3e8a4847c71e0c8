package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// bashAdmissionHook is the bash admission hook of the webhook benchmark:
// one jq call reads the object's name, as a typical hook does. Both
// servers run it; only its webhook's name and the label value it selects
// differ (label is also the name the denial message gives).
func bashAdmissionHook(name, label string) string {
	return `#!/usr/bin/env bash
set -euo pipefail
if [[ "${1:-}" == --config ]]; then
  cat <<'YAML'
configVersion: v1
kubernetesValidating:
- name: ` + name + `
  labelSelector: {matchLabels: {hook: ` + label + `}}
  rules:
  - {apiGroups: [""], apiVersions: [v1], resources: [configmaps], operations: [CREATE]}
YAML
  exit 0
fi
name=$(jq -r '.[0].review.request.object.metadata | (.name // "") + (.generateName // "")' "$BINDING_CONTEXT_PATH")
if [[ "$name" == deny-* ]]; then
  echo '{"allowed": false, "message": "denied by the ` + label + ` hook"}' > "$VALIDATING_RESPONSE_PATH"
else
  echo '{"allowed": true}' > "$VALIDATING_RESPONSE_PATH"
fi
`
}

// The webhooks of the benchmark, by the label value each selects.
const (
	hookNone     = "none"     // no webhook: the API server's own round trip
	hookBash     = "bash"     // ours, bash
	hookCompiled = "compiled" // ours, compiled
	hookShell    = "shell"    // shell-operator, the same bash hook
)

// webhookName is the name of the webhook that selects the label value.
func webhookName(label string) string { return label + ".bench.addon-operator.io" }

// Routes of a request.
const (
	RouteAPIServer = "API server" // a dry-run create the API server sends on
	RouteDirect    = "direct"     // an AdmissionReview posted to the server
)

// WebhookResult is one hook's admission round trip at one concurrency,
// timed at the client.
type WebhookResult struct {
	// Route is RouteAPIServer or RouteDirect.
	Route string
	// Server is "addon-operator" or "shell-operator"; empty for Hook
	// "none".
	Server string
	// Hook is "bash", "compiled" or "none" (no webhook selects the
	// object: the API server's own round trip).
	Hook        string
	Concurrency int
	Requests    int
	P50, P99    time.Duration
	// ServerCPU and HookCPU are the CPU time per request of the serving
	// process and of the hook processes it ran (its waited-for
	// children), from /proc.
	ServerCPU, HookCPU time.Duration
}

// webhookTarget is one hook on one server.
type webhookTarget struct {
	server, hook, label string
	pid                 int
	url                 string // for RouteDirect
}

// WebhookOptions say what RunWebhooks measures.
type WebhookOptions struct {
	Requests    int
	Concurrency []int
	// ShellOperator is the shell-operator binary run beside ours; empty
	// measures ours only.
	ShellOperator string
	// Direct also posts AdmissionReviews to each server, past the API
	// server.
	Direct bool
}

// startShellOperatorTarget starts shell-operator with the same bash hook
// as ours, its webhook pointed at its loopback port, and returns it as a
// target with the function that stops it.
func startShellOperatorTarget(ctx, wctx context.Context, bin, dir, kubeconfig string, client kubernetes.Interface,
	ns, port string, certs webhookCerts,
) (webhookTarget, func(), error) {
	hooks := filepath.Join(dir, "shell-operator-hooks")
	if err := os.MkdirAll(hooks, 0o750); err != nil {
		return webhookTarget{}, nil, fmt.Errorf("create %s: %w", hooks, err)
	}
	if err := os.WriteFile(filepath.Join(hooks, "bash"), []byte(bashAdmissionHook(webhookName(hookShell), hookShell)), 0o700); err != nil { //nolint:gosec // G306: a hook must be executable
		return webhookTarget{}, nil, fmt.Errorf("write shell-operator's hook: %w", err)
	}
	so, err := startShellOperator(ctx, bin, dir, hooks, kubeconfig, ns, port, certs)
	if err != nil {
		return webhookTarget{}, nil, err
	}
	path, err := pointShellOperatorAtLoopback(wctx, client, port, webhookName(hookShell))
	if err != nil {
		so.stop()
		return webhookTarget{}, nil, fmt.Errorf("log %s: %w", so.log, err)
	}
	t := webhookTarget{server: "shell-operator", hook: hookBash, label: hookShell, pid: so.pid, url: "https://" + net.JoinHostPort("127.0.0.1", port) + path}
	return t, so.stop, nil
}

// RunWebhooks starts a control plane, the operator with its webhook
// server over one module with a bash and a compiled admission hook and,
// with o.ShellOperator, shell-operator with the same bash hook, and
// measures o.Requests round trips for each hook at each concurrency:
// through the API server and, with o.Direct, posted to each server.
func RunWebhooks(ctx context.Context, env Env, o WebhookOptions) (res []WebhookResult, err error) {
	dir := filepath.Join(env.Dir, "webhook")
	layout, err := writeWebhookModule(ctx, dir)
	if err != nil {
		return nil, err
	}
	certs, err := writeWebhookCerts(dir)
	if err != nil {
		return nil, err
	}
	cp, client, err := env.startCluster(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, stopCluster(cp)) }()
	const ns = "bench-webhook"
	if err := createNamespace(ctx, client, ns); err != nil {
		return nil, err
	}
	ports, err := freePorts(ctx, 2)
	if err != nil {
		return nil, err
	}
	env.progressf("webhook: starting the operator (webhook port %s)", ports[0])
	op, err := StartOperator(ctx, OperatorOptions{
		Binary: env.Binary, Kubeconfig: cp.Kubeconfig, Namespace: ns, Layout: layout, Workers: 4, Dir: dir,
		Args: append([]string{
			"--webhook-server", "--webhook-url=https://127.0.0.1:" + ports[0], "--config-map-validation=false",
			"--validating-webhook-listen-address=127.0.0.1", "--validating-webhook-listen-port=" + ports[0],
			"--validating-webhook-server-cert=" + certs.Cert, "--validating-webhook-server-key=" + certs.Key, "--validating-webhook-ca=" + certs.CA,
		}, env.OperatorArgs...),
	})
	if err != nil {
		return nil, err
	}
	defer op.Stop()
	wctx, cancel := context.WithTimeout(ctx, reactionTimeout)
	defer cancel()
	if _, err := op.Logs.Wait(wctx, 0, Message(msgConverged)); err != nil {
		return nil, fmt.Errorf("wait for the first converge (log %s): %w", op.LogPath(), err)
	}
	targets := []webhookTarget{
		{server: "addon-operator", hook: hookBash, label: hookBash, pid: op.Pid()},
		{server: "addon-operator", hook: hookCompiled, label: hookCompiled, pid: op.Pid()},
	}
	for i := range targets {
		if targets[i].url, err = ourWebhookURL(wctx, client, webhookName(targets[i].label)); err != nil {
			return nil, err
		}
	}
	if o.ShellOperator != "" {
		env.progressf("webhook: starting shell-operator (webhook port %s)", ports[1])
		shell, stop, err := startShellOperatorTarget(ctx, wctx, o.ShellOperator, dir, cp.Kubeconfig, client, ns, ports[1], certs)
		if err != nil {
			return nil, err
		}
		defer stop()
		// Ours and shell-operator's bash hook side by side: ours first
		// at each step, then shell-operator's, then ours compiled.
		targets = []webhookTarget{targets[0], shell, targets[1]}
	}
	cfg := rest.CopyConfig(cp.Config)
	cfg.QPS, cfg.Burst = -1, 0 // no client-side limit: the server's round trip is measured
	fast, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	cms := fast.CoreV1().ConfigMaps(ns)
	for _, t := range targets {
		if err := waitDenied(wctx, cms, t.label); err != nil {
			return nil, err
		}
	}
	direct, err := newDirectClient(certs.CA, slices.Max(o.Concurrency))
	if err != nil {
		return nil, err
	}
	return measureWebhooks(ctx, env, o, targets, cms, direct, ns)
}

// measureWebhooks sends o.Requests to each target at each concurrency,
// through the API server and, with o.Direct, directly.
func measureWebhooks(ctx context.Context, env Env, o WebhookOptions, targets []webhookTarget, cms configMaps, direct *directClient, ns string) (res []WebhookResult, err error) {
	routes := []string{RouteAPIServer}
	if o.Direct {
		routes = append(routes, RouteDirect)
	}
	hz := clockTicks(ctx)
	for _, route := range routes {
		for _, c := range o.Concurrency {
			ts := targets
			if route == RouteAPIServer {
				ts = append([]webhookTarget{{hook: hookNone, label: hookNone}}, targets...)
			}
			for _, t := range ts {
				env.progressf("webhook: %s, %s hook, %d concurrent, %d requests", route, strings.TrimSpace(t.server+" "+t.hook), c, o.Requests)
				var before, after cpuTimes
				if t.pid != 0 {
					if before, err = readCPU(t.pid); err != nil {
						return res, err
					}
				}
				var d []time.Duration
				if route == RouteAPIServer {
					d, err = roundTrips(ctx, o.Requests, c, func(ctx context.Context) error {
						cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "ok-", Labels: map[string]string{"hook": t.label}}}
						_, err := cms.Create(ctx, cm, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
						return err
					})
				} else {
					d, err = roundTrips(ctx, o.Requests, c, func(ctx context.Context) error {
						return direct.review(ctx, t.url, ns, t.label)
					})
				}
				if err != nil {
					return res, fmt.Errorf("%s, %s %s hook: %w", route, t.server, t.hook, err)
				}
				r := WebhookResult{Route: route, Server: t.server, Hook: t.hook, Concurrency: c, Requests: o.Requests, P50: percentile(d, 0.50), P99: percentile(d, 0.99)}
				if t.pid != 0 {
					if after, err = readCPU(t.pid); err != nil {
						return res, err
					}
					r.ServerCPU = cpuDuration(after.self-before.self, hz) / time.Duration(o.Requests)
					r.HookCPU = cpuDuration(after.children-before.children, hz) / time.Duration(o.Requests)
				}
				res = append(res, r)
			}
		}
	}
	return res, nil
}

// ourWebhookURL returns the URL of our webhook named name, from the
// operator's ValidatingWebhookConfiguration.
func ourWebhookURL(ctx context.Context, client kubernetes.Interface, name string) (string, error) {
	cfg, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, "addon-operator-hooks", metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("read the operator's webhook configuration: %w", err)
	}
	for i := range cfg.Webhooks {
		if w := &cfg.Webhooks[i]; w.Name == name && w.ClientConfig.URL != nil {
			return *w.ClientConfig.URL, nil
		}
	}
	return "", fmt.Errorf("the operator's webhook configuration has no URL for %s", name)
}

type configMaps interface {
	Create(ctx context.Context, cm *corev1.ConfigMap, opts metav1.CreateOptions) (*corev1.ConfigMap, error)
}

// waitDenied polls until the hook's webhook denies a request: the
// configuration is in force in the API server.
func waitDenied(ctx context.Context, cms configMaps, hook string) error {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "deny-", Labels: map[string]string{"hook": hook}}}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		_, err := cms.Create(ctx, cm, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil && strings.Contains(err.Error(), "denied by the "+hook+" hook") {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for the %s webhook to deny: %w (last: %w)", hook, ctx.Err(), err)
		case <-tick.C:
		}
	}
}

// roundTrips runs send n times from c goroutines and returns each run's
// duration.
func roundTrips(ctx context.Context, n, c int, send func(context.Context) error) ([]time.Duration, error) {
	var mu sync.Mutex
	out := make([]time.Duration, 0, n)
	var errs []error
	next := make(chan struct{}, n)
	for range n {
		next <- struct{}{}
	}
	close(next)
	var wg sync.WaitGroup
	for range c {
		wg.Go(func() {
			for range next {
				start := time.Now()
				err := send(ctx)
				d := time.Since(start)
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else {
					out = append(out, d)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		return nil, fmt.Errorf("%d of %d requests failed, first: %w", len(errs), n, errs[0])
	}
	return out, nil
}

// writeWebhookModule writes a module with the bash hook and the compiled
// hook (built from testdata/webhookhook) under dir.
func writeWebhookModule(ctx context.Context, dir string) (Layout, error) {
	hooks := filepath.Join(dir, "modules", "010-bench-hooks", "hooks")
	global := filepath.Join(dir, "global-hooks")
	for _, d := range []string{hooks, global} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			return Layout{}, fmt.Errorf("create %s: %w", d, err)
		}
	}
	if err := os.WriteFile(filepath.Join(hooks, "bash"), []byte(bashAdmissionHook(webhookName(hookBash), hookBash)), 0o700); err != nil { //nolint:gosec // G306: a hook must be executable
		return Layout{}, fmt.Errorf("write bash hook: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "modules", "values.yaml"), []byte("benchHooksEnabled: true\n"), 0o600); err != nil {
		return Layout{}, fmt.Errorf("write modules/values.yaml: %w", err)
	}
	_, file, _, _ := runtime.Caller(0)
	cmd := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(hooks, "compiled"), "./testdata/webhookhook")
	cmd.Dir = filepath.Dir(file)
	if out, err := cmd.CombinedOutput(); err != nil {
		return Layout{}, fmt.Errorf("build the compiled hook: %w: %s", err, out)
	}
	return Layout{ModulesDir: filepath.Join(dir, "modules"), GlobalHooksDir: global, Keys: []string{"benchHooks"}}, nil
}

func freePort(ctx context.Context) (string, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port, ln.Close()
}

// WebhookReport formats results as Markdown tables: every figure, then,
// where shell-operator ran, its p50 and p99 over ours for the same bash
// hook at each route and concurrency.
func WebhookReport(res []WebhookResult) string {
	var b strings.Builder
	b.WriteString("| route | server | hook | concurrent requests | requests | p50 | p99 | CPU per request: server | hook processes |\n" +
		"| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, r := range res {
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %d | %s | %s | %s | %s |\n", r.Route, r.Server, r.Hook, r.Concurrency, r.Requests,
			r.P50.Round(100*time.Microsecond), r.P99.Round(100*time.Microsecond), cpuCell(r.ServerCPU), cpuCell(r.HookCPU))
	}
	var ratios []string
	for _, s := range res {
		if s.Server != "shell-operator" {
			continue
		}
		for _, o := range res {
			if o.Server == "addon-operator" && o.Hook == s.Hook && o.Route == s.Route && o.Concurrency == s.Concurrency {
				ratios = append(ratios, fmt.Sprintf("| %s | %s | %d | %.2fx | %.2fx |\n", s.Route, s.Hook, s.Concurrency,
					float64(s.P50)/float64(o.P50), float64(s.P99)/float64(o.P99)))
			}
		}
	}
	if len(ratios) > 0 {
		b.WriteString("\nshell-operator v1.4.12 / addon-operator, the same bash hook (above 1: ours is faster):\n\n" +
			"| route | hook | concurrent requests | p50 | p99 |\n| --- | --- | ---: | ---: | ---: |\n")
		b.WriteString(strings.Join(ratios, ""))
	}
	return b.String()
}

// cpuCell is a CPU time per request for the report; blank where nothing was
// measured (no hook ran).
func cpuCell(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.Round(10 * time.Microsecond).String()
}
