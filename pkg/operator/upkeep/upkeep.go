// Package upkeep is the owner of modules' maintenance modes and of the
// remediation of their failing releases: which modules the configuration
// puts in maintenance (their releases neither upgraded nor healed), and
// how many deployments of each failed in a row, rolling back or
// uninstalling a release when the count reaches its remediation's retries.
package upkeep

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/addon-operator/addon-operator/pkg/helm/revisions"
	"github.com/addon-operator/addon-operator/pkg/logkey"
	"github.com/addon-operator/addon-operator/pkg/module"
)

// Releases are what upkeep does to releases; *release.Manager is the
// real one.
type Releases interface {
	// SetMaintenance stops (on) or resumes healing and drift reverts of
	// the module's release.
	SetMaintenance(name string, on bool)
	// Remediate rolls back or uninstalls the module's failed release.
	Remediate(ctx context.Context, name string, r revisions.Remediation) (revisions.Remedy, error)
}

// Recorder keeps the maintenance metric; *metrics.Recorder is the real
// one.
type Recorder interface {
	ModuleMaintenance(module string, on bool)
}

// Events records remediations as Kubernetes Events; *event.Recorder is
// one.
type Events interface {
	ReleaseRemediated(module, note string)
}

// Options are Upkeep's inputs. Recorder, Events and Changed may be nil.
type Options struct {
	Releases Releases
	Recorder Recorder
	Events   Events
	Logger   *slog.Logger
	// Remediation and RemediationRetries are the defaults of modules whose
	// module.yaml sets none (see operator.Options).
	Remediation        string
	RemediationRetries int
	// Changed is called with a module's name after its maintenance mode
	// changed, outside Upkeep's lock: the Module object shows it.
	Changed func(name string)
}

// Upkeep holds every module's maintenance mode and failed-deployment
// count. Its methods are safe for concurrent use: the main queue worker
// applies maintenance, each module's run counts its deployments.
type Upkeep struct {
	opts Options
	mu   sync.Mutex
	// maintenance are the modules in maintenance; failures count each
	// module's failed deployments in a row; notes say what the last
	// remediation of each did, until a deployment succeeds.
	maintenance map[string]bool
	failures    map[string]int
	notes       map[string]string
}

// New returns the Upkeep of a process, with no module in maintenance.
func New(opts Options) *Upkeep {
	return &Upkeep{opts: opts, maintenance: map[string]bool{}, failures: map[string]int{}, notes: map[string]string{}}
}

// InMaintenance reports whether the module is in maintenance.
func (u *Upkeep) InMaintenance(name string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.maintenance[name]
}

// Remediation says what the module's last remediation did, "" when none
// happened since its last successful deployment.
func (u *Upkeep) Remediation(name string) string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.notes[name]
}

// ApplyMaintenance takes the maintenance modes of a configuration (on,
// by module key) into use for mods and returns the modules that left
// maintenance: their releases must be reconciled at once. A module in
// maintenance keeps running its hooks, but its release is not upgraded,
// its deleted objects are not restored and its drift is reported, never
// reverted.
func (u *Upkeep) ApplyMaintenance(mods []*module.Module, on map[string]bool) []string {
	var left []string
	for _, m := range mods {
		name, now := m.Name(), on[m.Key()]
		u.mu.Lock()
		was := u.maintenance[name]
		u.maintenance[name] = now
		u.mu.Unlock()
		if u.opts.Changed != nil {
			u.opts.Changed(name)
		}
		if was == now {
			continue
		}
		u.opts.Releases.SetMaintenance(name, now)
		if u.opts.Recorder != nil {
			u.opts.Recorder.ModuleMaintenance(name, now)
		}
		if now {
			u.opts.Logger.Info("module entered maintenance: its release is left as it is", slog.String(logkey.Module, name))
			continue
		}
		u.opts.Logger.Info("module left maintenance", slog.String(logkey.Module, name))
		left = append(left, name)
	}
	return left
}

// remediationFor returns the module's remediation and how many failed
// deployments in a row start it: the module's own setting where it has
// one, the options' otherwise. A setting that does not parse is none.
func (u *Upkeep) remediationFor(m *module.Module) (revisions.Remediation, int) {
	own := m.Remediation()
	strategy, retries := u.opts.Remediation, u.opts.RemediationRetries
	if own.Strategy != "" {
		strategy = own.Strategy
	}
	if own.Retries > 0 {
		retries = own.Retries
	}
	r, err := revisions.ParseRemediation(strategy)
	if err != nil {
		return revisions.RemediationNone, retries
	}
	return r, max(retries, 1)
}

// AfterDeploy counts a module's failed deployments in a row and, when the
// count reaches its remediation's retries, remediates the release: rolls
// it back to its last deployed revision or uninstalls it. The module run
// still fails with deployErr and is retried with backoff, so the new
// revision is tried again; the count starts over. A deployment that
// succeeds clears the count and the remediation's note.
func (u *Upkeep) AfterDeploy(ctx context.Context, m *module.Module, deployErr error) {
	name := m.Name()
	if deployErr == nil {
		u.mu.Lock()
		u.failures[name], u.notes[name] = 0, ""
		u.mu.Unlock()
		return
	}
	strategy, retries := u.remediationFor(m)
	if strategy == revisions.RemediationNone || ctx.Err() != nil {
		return
	}
	u.mu.Lock()
	u.failures[name]++
	failures := u.failures[name]
	if failures >= retries {
		u.failures[name] = 0
	}
	u.mu.Unlock()
	if failures < retries {
		return
	}
	remedy, err := u.opts.Releases.Remediate(ctx, name, strategy)
	if remedy.Action == "" && err == nil {
		return // no failed revision: the failure came before Helm deployed anything
	}
	note := remedyNote(remedy, failures)
	if err != nil {
		note = fmt.Sprintf("%s failed: %v", note, err)
		u.opts.Logger.Error("release remediation failed", slog.String(logkey.Module, name), slog.String(logkey.Reason, remedy.Action), logkey.Err(err))
	} else {
		u.opts.Logger.Warn("release remediated; the new revision is retried with backoff", slog.String(logkey.Module, name),
			slog.String(logkey.Reason, remedy.Action), slog.Int(logkey.Revision, remedy.Target), slog.Int(logkey.Count, failures))
	}
	u.mu.Lock()
	u.notes[name] = note
	u.mu.Unlock()
	if u.opts.Events != nil {
		u.opts.Events.ReleaseRemediated(name, note)
	}
}

// remedyNote says what a remediation did, for status and Events.
func remedyNote(r revisions.Remedy, failures int) string {
	if r.Action == string(revisions.RemediationRollback) {
		return fmt.Sprintf("rolled back from failed revision %d to revision %d after %d failed deployments", r.Failed, r.Target, failures)
	}
	return fmt.Sprintf("failed revision %d uninstalled after %d failed deployments", r.Failed, failures)
}
