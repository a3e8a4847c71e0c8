package batch

import (
	"encoding/json"
	"fmt"
	"path/filepath"
)

// A batch binary's readiness probe (the module SDK's app.WithReadiness)
// is a hook of its own, run as "hook ready" by a schedule binding whose
// crontab the SDK derives from the probe's interval ("*/N * * * * *", N
// seconds, 15 when not given). It decides whether its module is ready,
// not what the module deploys, so it never runs on the main queue: its
// bindings run on a queue of their own per module, ReadinessQueue, and a
// failing probe is allowed to fail (the module shows why it is not ready,
// see the operator) instead of being retried at the head of its queue; the
// next tick probes again.

// ReadinessID is the ID of a batch binary's readiness hook.
const ReadinessID = "ready"

// readinessQueuePrefix starts the name of a module's readiness queue.
const readinessQueuePrefix = "readiness-"

// ReadinessQueue is the queue of the readiness probe of the batch binary
// at source: "readiness-<module dir>", the module dir being the one above
// the hooks directory the binary is in.
func ReadinessQueue(source string) string {
	dir := filepath.Dir(source)
	for d := dir; ; d = filepath.Dir(d) {
		if filepath.Base(d) == "hooks" {
			return readinessQueuePrefix + filepath.Base(filepath.Dir(d))
		}
		if filepath.Dir(d) == d {
			return readinessQueuePrefix + filepath.Base(dir)
		}
	}
}

// IsReadinessQueue reports whether name is a readiness probe's queue.
func IsReadinessQueue(name string) bool {
	return len(name) > len(readinessQueuePrefix) && name[:len(readinessQueuePrefix)] == readinessQueuePrefix
}

// ProbeConfig rewrites the readiness hook's SDK configuration so that its
// schedule bindings run on queue and are allowed to fail.
func ProbeConfig(raw json.RawMessage, queue string) (json.RawMessage, error) {
	var sdk map[string]any
	if err := json.Unmarshal(raw, &sdk); err != nil || sdk == nil {
		return raw, nil //nolint:nilerr // parseBatchHook names the problem
	}
	sched, _ := sdk["schedule"].([]any)
	for _, s := range sched {
		if b, ok := s.(map[string]any); ok {
			b["queue"], b["allowFailure"] = queue, true
		}
	}
	out, err := json.Marshal(sdk)
	if err != nil {
		return nil, fmt.Errorf("encode readiness config: %w", err)
	}
	return out, nil
}
