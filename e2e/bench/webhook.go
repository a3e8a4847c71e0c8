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
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// bashAdmissionHook is the bash admission hook of the webhook benchmark:
// one jq call reads the object's name, as a typical hook does.
const bashAdmissionHook = `#!/usr/bin/env bash
set -euo pipefail
if [[ "${1:-}" == --config ]]; then
  cat <<'YAML'
configVersion: v1
kubernetesValidating:
- name: bash.bench.addon-operator.io
  labelSelector: {matchLabels: {hook: bash}}
  rules:
  - {apiGroups: [""], apiVersions: [v1], resources: [configmaps], operations: [CREATE]}
YAML
  exit 0
fi
name=$(jq -r '.[0].review.request.object.metadata | (.name // "") + (.generateName // "")' "$BINDING_CONTEXT_PATH")
if [[ "$name" == deny-* ]]; then
  echo '{"allowed": false, "message": "denied by the bash hook"}' > "$VALIDATING_RESPONSE_PATH"
else
  echo '{"allowed": true}' > "$VALIDATING_RESPONSE_PATH"
fi
`

// WebhookResult is the admission round trip through the API server for one
// hook at one concurrency: dry-run creates of a ConfigMap the hook's
// webhook selects, timed at the client.
type WebhookResult struct {
	// Hook is "bash", "compiled" or "none" (no webhook selects the object:
	// the API server's own round trip).
	Hook        string
	Concurrency int
	Requests    int
	P50, P99    time.Duration
	// OperatorCPU and HookCPU are the CPU time per request of the
	// operator's process and of the hook processes it ran (its waited-for
	// children), from /proc.
	OperatorCPU, HookCPU time.Duration
}

// RunWebhooks starts a control plane and the operator with its webhook
// server over one module with a bash and a compiled admission hook, and
// measures requests round trips at each concurrency.
func RunWebhooks(ctx context.Context, env Env, requests int, concurrency []int) (res []WebhookResult, err error) {
	dir := filepath.Join(env.Dir, "webhook")
	layout, err := writeWebhookModule(ctx, dir)
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
	port, err := freePort(ctx)
	if err != nil {
		return nil, err
	}
	env.progressf("webhook: starting the operator (webhook port %s)", port)
	op, err := StartOperator(ctx, OperatorOptions{
		Binary: env.Binary, Kubeconfig: cp.Kubeconfig, Namespace: ns, Layout: layout, Workers: 4, Dir: dir,
		Args: append([]string{
			"--webhook-server", "--webhook-url=https://127.0.0.1:" + port, "--config-map-validation=false",
			"--validating-webhook-listen-address=127.0.0.1", "--validating-webhook-listen-port=" + port,
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
	cfg := rest.CopyConfig(cp.Config)
	cfg.QPS, cfg.Burst = -1, 0 // no client-side limit: the server's round trip is measured
	fast, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	cms := fast.CoreV1().ConfigMaps(ns)
	for _, hook := range []string{"bash", "compiled"} {
		if err := waitDenied(wctx, cms, hook); err != nil {
			return nil, err
		}
	}
	hz := clockTicks(ctx)
	for _, hook := range []string{"none", "bash", "compiled"} {
		for _, c := range concurrency {
			env.progressf("webhook: %s hook, %d concurrent, %d requests", hook, c, requests)
			before, err := readCPU(op.Pid())
			if err != nil {
				return res, err
			}
			d, err := roundTrips(ctx, cms, hook, requests, c)
			if err != nil {
				return res, err
			}
			after, err := readCPU(op.Pid())
			if err != nil {
				return res, err
			}
			res = append(res, WebhookResult{
				Hook: hook, Concurrency: c, Requests: requests, P50: percentile(d, 0.50), P99: percentile(d, 0.99),
				OperatorCPU: cpuDuration(after.self-before.self, hz) / time.Duration(requests),
				HookCPU:     cpuDuration(after.children-before.children, hz) / time.Duration(requests),
			})
		}
	}
	return res, nil
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

// roundTrips sends n dry-run creates from c goroutines and returns each
// one's duration.
func roundTrips(ctx context.Context, cms configMaps, hook string, n, c int) ([]time.Duration, error) {
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
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "ok-", Labels: map[string]string{"hook": hook}}}
				start := time.Now()
				_, err := cms.Create(ctx, cm, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
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
	if err := os.WriteFile(filepath.Join(hooks, "bash"), []byte(bashAdmissionHook), 0o700); err != nil { //nolint:gosec // G306: a hook must be executable
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

// WebhookReport formats results as a Markdown table.
func WebhookReport(res []WebhookResult) string {
	var b strings.Builder
	b.WriteString("| hook | concurrent requests | requests | p50 | p99 | CPU per request: operator | hook processes |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, r := range res {
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %s | %s | %s |\n", r.Hook, r.Concurrency, r.Requests, r.P50.Round(100*time.Microsecond), r.P99.Round(100*time.Microsecond),
			cpuCell(r.OperatorCPU), cpuCell(r.HookCPU))
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
