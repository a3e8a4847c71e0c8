// Package bench measures the addon-operator binary against a local control
// plane: it generates synthetic modules, runs the operator over them and
// reports start-to-converged, reaction latencies, healing, idle CPU and peak
// memory against the project's targets.
package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/addon-operator/addon-operator/e2e/cluster"
)

// Layout is a generated modules tree.
type Layout struct {
	ModulesDir     string
	GlobalHooksDir string
	// Keys are the module keys (equal to the module names), in module order.
	Keys []string
}

// EnvNamespace is the environment variable, set on the operator, through
// which generated hooks learn the namespace they watch.
const EnvNamespace = "BENCH_NAMESPACE"

// Rendered object data keys of a module's ConfigMap.
const (
	KeyConfig   = "config"
	KeyFromHook = "fromHook"
	KeyWatched  = "watched"
)

// WatchLabel labels the ConfigMaps a module's kubernetes hook watches; its
// value is the module key.
const WatchLabel = "bench-watch"

// Generate writes n modules named mod1..modN into dir/modules, groupSize
// consecutive modules sharing one order prefix (modules of one order run in
// parallel), a modules/values.yaml enabling all of them and an empty
// dir/global-hooks. w selects the hooks' language and the chart's shape.
func Generate(dir string, n, groupSize int, w Workload) (Layout, error) {
	if n < 1 || groupSize < 1 {
		return Layout{}, fmt.Errorf("generate modules: n %d and group size %d must be positive", n, groupSize)
	}
	l := Layout{ModulesDir: filepath.Join(dir, "modules"), GlobalHooksDir: filepath.Join(dir, "global-hooks")}
	if err := os.MkdirAll(l.GlobalHooksDir, 0o750); err != nil {
		return Layout{}, fmt.Errorf("create global hooks dir: %w", err)
	}
	var enabled strings.Builder
	for k := 1; k <= n; k++ {
		key := fmt.Sprintf("mod%d", k)
		order := 10 * ((k-1)/groupSize + 1)
		if err := writeModule(filepath.Join(l.ModulesDir, fmt.Sprintf("%03d-%s", order, key)), key, w); err != nil {
			return Layout{}, err
		}
		fmt.Fprintf(&enabled, "%sEnabled: true\n", key)
		l.Keys = append(l.Keys, key)
	}
	if err := writeFile(filepath.Join(l.ModulesDir, "values.yaml"), enabled.String(), 0o644); err != nil {
		return Layout{}, err
	}
	return l, nil
}

// GenerateChains writes n modules named mod1..modN as Generate does,
// but with a module.yaml each and no order prefix: they form `chains`
// dependency chains, module k requiring module k-chains, so mod1..modC
// start the chains and the modules of one chain run one after another once
// the one before is ready.
func GenerateChains(dir string, n, chains int, w Workload) (Layout, error) {
	if n < 1 || chains < 1 {
		return Layout{}, fmt.Errorf("generate modules: n %d and chains %d must be positive", n, chains)
	}
	l := Layout{ModulesDir: filepath.Join(dir, "modules"), GlobalHooksDir: filepath.Join(dir, "global-hooks")}
	if err := os.MkdirAll(l.GlobalHooksDir, 0o750); err != nil {
		return Layout{}, fmt.Errorf("create global hooks dir: %w", err)
	}
	var enabled strings.Builder
	for k := 1; k <= n; k++ {
		key := fmt.Sprintf("mod%d", k)
		mdir := filepath.Join(l.ModulesDir, key)
		if err := writeModule(mdir, key, w); err != nil {
			return Layout{}, err
		}
		def := "weight: 10\n"
		if k > chains {
			def += fmt.Sprintf("requires: {mod%d: \"\"}\n", k-chains)
		}
		if err := writeFile(filepath.Join(mdir, "module.yaml"), def, 0o644); err != nil {
			return Layout{}, err
		}
		fmt.Fprintf(&enabled, "%sEnabled: true\n", key)
		l.Keys = append(l.Keys, key)
	}
	if err := writeFile(filepath.Join(l.ModulesDir, "values.yaml"), enabled.String(), 0o644); err != nil {
		return Layout{}, err
	}
	return l, nil
}

// writeModule writes one module: chart, static values and two hooks.
func writeModule(dir, key string, w Workload) error {
	r := strings.NewReplacer("MODKEY", key, "STARTDELAY", w.StartDelay.String())
	for _, f := range moduleFiles(w) {
		if err := writeFile(filepath.Join(dir, f.path), r.Replace(f.content), f.mode); err != nil {
			return err
		}
	}
	return nil
}

func writeFile(path, content string, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

type moduleFile struct {
	path    string
	content string
	mode    os.FileMode
}

// moduleFiles are a module's files with MODKEY standing for its key and
// STARTDELAY for w.StartDelay.
func moduleFiles(w Workload) []moduleFile {
	beforeHelm, watch := beforeHelmHook, watchHook
	if w.Hooks == HooksJQ {
		beforeHelm, watch = jqBeforeHelmHook, jqWatchHook
	}
	fourth := moduleFile{"templates/secret.yaml", opaqueTemplate, 0o644}
	if w.Deployment {
		fourth = moduleFile{"templates/deployment.yaml", deploymentTemplate, 0o644}
	}
	return []moduleFile{
		{"Chart.yaml", "apiVersion: v2\nname: MODKEY\nversion: 0.1.0\n", 0o644},
		{"values.yaml", "MODKEY:\n  config: initial\n", 0o644},
		{"templates/configmap.yaml", configMapTemplate, 0o644},
		fourth,
		{"templates/serviceaccount.yaml", serviceAccountTemplate, 0o644},
		{"templates/service.yaml", serviceTemplate, 0o644},
		{"hooks/before-helm", beforeHelm, 0o755},
		{"hooks/watch", watch, 0o755},
	}
}

// The chart: four objects that need no kubelet (the Secret gives way to a
// Deployment with Workload.Deployment). The Service is headless so
// that hundreds of releases do not exhaust the local service IP range.
const (
	configMapTemplate = `apiVersion: v1
kind: ConfigMap
metadata:
  name: MODKEY
data:
  config: {{ .Values.MODKEY.config | quote }}
  fromHook: {{ .Values.MODKEY.fromHook | default "" | quote }}
  watched: {{ .Values.MODKEY.watched | default "" | quote }}
`
	// opaqueTemplate is the Secret.
	opaqueTemplate = `apiVersion: v1
kind: Secret
metadata:
  name: MODKEY
type: Opaque
stringData:
  config: {{ .Values.MODKEY.config | quote }}
`
	serviceAccountTemplate = `apiVersion: v1
kind: ServiceAccount
metadata:
  name: MODKEY
`
	serviceTemplate = `apiVersion: v1
kind: Service
metadata:
  name: MODKEY
spec:
  clusterIP: None
  selector:
    app: MODKEY
  ports:
  - name: http
    port: 80
`
	// deploymentTemplate is the Deployment of Workload.Deployment: one
	// replica, the Service's Pod, started by the simulated node after
	// STARTDELAY. No image is pulled there; the name is any string. The
	// Pod runs as the chart's ServiceAccount, which Helm creates before
	// it, so the Pod is never refused for a missing account.
	deploymentTemplate = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: MODKEY
spec:
  replicas: 1
  selector:
    matchLabels:
      app: MODKEY
  template:
    metadata:
      labels:
        app: MODKEY
      annotations:
        ` + cluster.AnnotationStartDelay + `: "STARTDELAY"
    spec:
      serviceAccountName: MODKEY
      automountServiceAccountToken: false
      containers:
      - name: app
        image: registry.invalid/bench/app:1.0
        ports:
        - containerPort: 80
`
)

// The sh hooks (WorkloadSh) are POSIX sh with sed and grep only. Both rely
// on the operator writing compact JSON inputs.
const (
	// beforeHelmHook sets fromHook to "hook-" + the module's config value.
	beforeHelmHook = `#!/bin/sh
if [ "$1" = --config ]; then
	echo '{"configVersion":"v1","beforeHelm":10}'
	exit 0
fi
config=$(sed -n 's/.*"MODKEY":{[^}]*"config":"\([^"]*\)".*/\1/p' "$VALUES_PATH")
printf '{"op":"add","path":"/MODKEY/fromHook","value":"hook-%s"}\n' "$config" >"$VALUES_JSON_PATCH_PATH"
`
	// watchHook turns the filter results of every ConfigMap labelled
	// bench-watch=MODKEY into watched: the sorted values joined by spaces.
	// As a group binding, events arrive as Group contexts that carry only
	// the snapshot, so every filterResult in the file is a current object.
	watchHook = `#!/bin/sh
if [ "$1" = --config ]; then
	cat <<CONFIG
configVersion: v1
kubernetes:
- name: watched
  apiVersion: v1
  kind: ConfigMap
  namespace:
    nameSelector:
      matchNames: ["$BENCH_NAMESPACE"]
  labelSelector:
    matchLabels:
      bench-watch: MODKEY
  jqFilter: .data.value
  keepFullObjectsInMemory: false
  group: watched
CONFIG
	exit 0
fi
seen=$(grep -o '"filterResult":"[^"]*"' "$BINDING_CONTEXT_PATH" | cut -d'"' -f4 | sort -u | tr '\n' ' ')
printf '{"op":"add","path":"/MODKEY/watched","value":"%s"}\n' "${seen% }" >"$VALUES_JSON_PATCH_PATH"
`
)
