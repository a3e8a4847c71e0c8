package bench

import "fmt"

// Workload selects the generated modules' hooks.
type Workload string

// Workloads.
const (
	// WorkloadJQ hooks are bash scripts that read and write JSON with jq,
	// as most published hooks are: what users run.
	WorkloadJQ Workload = "jq"
	// WorkloadSh hooks are POSIX sh with sed and grep: the cheapest a
	// script hook can be (dash starts in about a millisecond, bash and jq
	// in several). Earlier published figures used it.
	WorkloadSh Workload = "sh"
)

// ParseWorkload checks a -hooks flag value.
func ParseWorkload(s string) (Workload, error) {
	switch w := Workload(s); w {
	case WorkloadJQ, WorkloadSh:
		return w, nil
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
