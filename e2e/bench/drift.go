package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Log messages of the operator's drift checks.
const (
	msgDrifted       = "release object drifted from its manifest"
	msgDriftReverted = "drift reverted"
	// driftTimeout bounds the wait for a drift to be reported or reverted.
	driftTimeout = 30 * time.Second
)

// measureDrift edits a rendered ConfigMap per sample, as kubectl edit
// does, and times until the operator reports the drift and, when it runs
// with --heal-drift, until it has reverted it.
func (env Env) measureDrift(ctx context.Context, s *session, res *Result) error {
	revert := slices.Contains(env.OperatorArgs, "--heal-drift")
	samples := cmp.Or(env.DriftSamples, env.Samples)
	for i := range samples {
		key := s.keys[pick(i, samples, len(s.keys), 3)]
		reported, reverted, err := s.drift(ctx, key, fmt.Sprintf("edit-%d", i), revert)
		if err != nil {
			return err
		}
		res.DriftReported = append(res.DriftReported, reported)
		if revert {
			res.DriftReverted = append(res.DriftReverted, reverted)
		}
	}
	env.progressf("N=%d: edit to drift reported, median %s", res.N, formatDuration(median(res.DriftReported)))
	return nil
}

// drift changes a field that key's manifest sets in its rendered
// ConfigMap and times the operator's log lines about it from just before
// the write.
func (s *session) drift(ctx context.Context, key, token string, revert bool) (reported, reverted time.Duration, err error) {
	mark := s.op.Logs.Mark()
	cms := s.client.CoreV1().ConfigMaps(s.ns)
	cm, err := cms.Get(ctx, key, metav1.GetOptions{})
	if err != nil {
		return 0, 0, fmt.Errorf("module %s: drift: %w", key, err)
	}
	cm.Data[KeyConfig] = token
	start := time.Now()
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		return 0, 0, fmt.Errorf("module %s: edit rendered ConfigMap: %w", key, err)
	}
	wctx, cancel := context.WithTimeout(ctx, driftTimeout)
	defer cancel()
	if _, err := s.op.Logs.Wait(wctx, mark, Message(msgDrifted, "module", key)); err != nil {
		return 0, 0, driftWaitErr(key, "reported", err)
	}
	reported = time.Since(start)
	if !revert {
		return reported, 0, nil
	}
	if _, err := s.op.Logs.Wait(wctx, mark, Message(msgDriftReverted, "module", key)); err != nil {
		return 0, 0, driftWaitErr(key, "reverted", err)
	}
	return reported, time.Since(start), nil
}

func driftWaitErr(key, what string, err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("module %s: drift not %s within %s", key, what, driftTimeout)
	}
	return fmt.Errorf("module %s: drift %s: %w", key, what, err)
}
