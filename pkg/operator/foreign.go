package operator

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	"github.com/addon-operator/addon-operator/pkg/logkey"
	"github.com/addon-operator/addon-operator/pkg/plan"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// foreignMessage is the ForeignReleases condition's message.
const foreignMessage = "Helm releases in the namespace that addon-operator did not create and that are named like no module are never upgraded, " +
	"uninstalled or purged. Uninstall them with Helm when they are no longer wanted; when they are releases of an earlier addon-operator, " +
	"start once with --adopt-unlabeled-releases to adopt them, which purges those whose module no longer exists."

// claimUnlabeled deals with the releases that carry no ownership label,
// once, at startup and before the first converge plan reads the owned
// releases. With --adopt-unlabeled-releases the Helm client has labelled
// them ours, so the plan upgrades or purges them like any other. Without
// it, those named like no module are logged and shown as the
// ForeignReleases condition; those named like a module are refused by
// their module's run instead.
func (o *Operator) claimUnlabeled(ctx context.Context) error {
	unlabeled, err := o.releases.ClaimUnlabeled(ctx)
	if err != nil {
		return fmt.Errorf("releases without ownership label: %w", err)
	}
	foreign := plan.Foreign(unlabeled, func(name string) bool {
		_, ok := o.modules.Module(name)
		return ok
	})
	if len(foreign) == 0 {
		return nil
	}
	for _, name := range foreign {
		o.log.Warn("release not created by addon-operator, not touched", slog.String(logkey.Release, name))
	}
	o.foreign.Store(&status.Condition{
		Type:     status.ConditionForeignReleases,
		Message:  foreignMessage,
		Since:    o.clock.Now(),
		Releases: slices.Clone(foreign),
	})
	return nil
}
