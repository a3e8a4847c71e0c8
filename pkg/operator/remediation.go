package operator

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/addon-operator/addon-operator/pkg/helm"
	"github.com/addon-operator/addon-operator/pkg/logkey"
	"github.com/addon-operator/addon-operator/pkg/module"
)

// remediationEvents records remediations as Kubernetes Events;
// *event.Recorder is one. Module events that cannot are left out.
type remediationEvents interface {
	ReleaseRemediated(module, note string)
}

// remediationFor returns the module's remediation and how many failed
// deployments in a row start it: the module's own setting where it has
// one, the options' otherwise. A setting that does not parse is none.
func (o *Operator) remediationFor(m *module.Module) (helm.Remediation, int) {
	own := m.Remediation()
	strategy, retries := o.opts.Remediation, o.opts.RemediationRetries
	if own.Strategy != "" {
		strategy = own.Strategy
	}
	if own.Retries > 0 {
		retries = own.Retries
	}
	r, err := helm.ParseRemediation(strategy)
	if err != nil {
		return helm.RemediationNone, retries
	}
	return r, max(retries, 1)
}

// afterDeployAttempt counts a module's failed deployments in a row and,
// when the count reaches its remediation's retries, remediates the
// release: rolls it back to its last deployed revision or uninstalls it.
// The module run still fails with deployErr and is retried with backoff,
// so the new revision is tried again; the count starts over. A
// deployment that succeeds clears the count and the status's remediation.
func (o *Operator) afterDeployAttempt(ctx context.Context, m *module.Module, deployErr error) {
	name := m.Name()
	if deployErr == nil {
		o.state.update(name, func(s *moduleState) { s.DeployFailures, s.Remediation = 0, "" })
		return
	}
	strategy, retries := o.remediationFor(m)
	if strategy == helm.RemediationNone || ctx.Err() != nil {
		return
	}
	var failures int
	o.state.update(name, func(s *moduleState) { s.DeployFailures++; failures = s.DeployFailures })
	if failures < retries {
		return
	}
	o.state.update(name, func(s *moduleState) { s.DeployFailures = 0 })
	remedy, err := o.releases.Remediate(ctx, name, strategy)
	if remedy.Action == "" && err == nil {
		return // no failed revision: the failure came before Helm deployed anything
	}
	note := remedyNote(remedy, failures)
	if err != nil {
		note = fmt.Sprintf("%s failed: %v", note, err)
		o.log.Error("release remediation failed", slog.String(logkey.Module, name), slog.String(logkey.Reason, remedy.Action), logkey.Err(err))
	} else {
		o.log.Warn("release remediated; the new revision is retried with backoff", slog.String(logkey.Module, name),
			slog.String(logkey.Reason, remedy.Action), slog.Int(logkey.Revision, remedy.Target), slog.Int(logkey.Count, failures))
	}
	o.state.update(name, func(s *moduleState) { s.Remediation = note })
	if ev, ok := o.moduleEvents.(remediationEvents); ok {
		ev.ReleaseRemediated(name, note)
	}
}

// remedyNote says what a remediation did, for status and Events.
func remedyNote(r helm.Remedy, failures int) string {
	if r.Action == string(helm.RemediationRollback) {
		return fmt.Sprintf("rolled back from failed revision %d to revision %d after %d failed deployments", r.Failed, r.Target, failures)
	}
	return fmt.Sprintf("failed revision %d uninstalled after %d failed deployments", r.Failed, failures)
}
