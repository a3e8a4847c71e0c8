package bench

import (
	"fmt"
	"time"
)

// Hooks selects the generated modules' hooks.
type Hooks string

// Hook languages.
const (
	// HooksJQ hooks are bash scripts that read and write JSON with jq,
	// as most published hooks are: what users run.
	HooksJQ Hooks = "jq"
	// HooksSh hooks are POSIX sh with sed and grep: the cheapest a
	// script hook can be (dash starts in about a millisecond, bash and jq
	// in several). Earlier published figures used it.
	HooksSh Hooks = "sh"
)

// Workload is what every generated module holds: its hooks and the shape
// of its chart.
type Workload struct {
	Hooks Hooks
	// Deployment, when set, gives the chart a Deployment of one replica
	// in place of its Secret: ConfigMap, Service, ServiceAccount and
	// Deployment, whose Pod a simulated node starts StartDelay after it
	// is bound (cluster.AnnotationStartDelay). It needs a control plane
	// with cluster.Workloads.
	Deployment bool
	StartDelay time.Duration
}

// ParseHooks checks a -hooks flag value.
func ParseHooks(s string) (Hooks, error) {
	switch h := Hooks(s); h {
	case HooksJQ, HooksSh:
		return h, nil
	}
	return "", fmt.Errorf("unknown hook workload %q (want jq or sh)", s)
}

// The bash+jq hooks do the same as the sh ones, the way hooks in the wild
// are written: bash with set -euo pipefail, jq for every JSON read and
// write.
const (
	jqBeforeHelmHook = `#!/usr/bin/env bash
set -euo pipefail
if [[ "${1:-}" == "--config" ]]; then
	cat <<'CONFIG'
{"configVersion":"v1","beforeHelm":10}
CONFIG
	exit 0
fi
config=$(jq -r '.MODKEY.config' "$VALUES_PATH")
jq -cn --arg v "hook-$config" '{op:"add",path:"/MODKEY/fromHook",value:$v}' >>"$VALUES_JSON_PATCH_PATH"
`
	// jqWatchHook: the last context's snapshot (a group binding's
	// contexts all carry it), or a Synchronization's objects.
	jqWatchHook = `#!/usr/bin/env bash
set -euo pipefail
if [[ "${1:-}" == "--config" ]]; then
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
seen=$(jq -r '.[-1] | [(.snapshots.watched // .objects // [])[] | .filterResult | strings] | unique | join(" ")' "$BINDING_CONTEXT_PATH")
jq -cn --arg v "$seen" '{op:"add",path:"/MODKEY/watched",value:$v}' >>"$VALUES_JSON_PATCH_PATH"
`
)
