package operator

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/hook/operation"
	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// applyOnHookError applies, for a hook run that failed with runErr, the
// object operations that the protocol applies regardless: status
// subresource updates marked ignoreHookError (a module SDK readiness
// probe writes its failed condition so). The hook's failure stands; an
// error applying them is added to it.
func (o *Operator) applyOnHookError(ctx context.Context, res *hook.Result, runErr error) error {
	if res == nil || len(res.KubernetesPatch) == 0 || o.patcher == nil {
		return runErr
	}
	ops, err := operation.Parse(res.KubernetesPatch)
	if err != nil {
		return fmt.Errorf("%w; KUBERNETES_PATCH_PATH: %w", runErr, err)
	}
	var keep []operation.Operation
	for i := range ops {
		if ops[i].AppliesOnHookError() {
			keep = append(keep, ops[i])
		}
	}
	if len(keep) == 0 {
		return runErr
	}
	o.log.Info("hook failed, applying its status updates marked ignoreHookError", slog.Int(logkey.Count, len(keep)), logkey.Err(runErr))
	if err := o.patcher.Apply(ctx, keep); err != nil {
		return fmt.Errorf("%w; KUBERNETES_PATCH_PATH: %w", runErr, err)
	}
	return runErr
}
