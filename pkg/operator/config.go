package operator

import (
	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/operator/admission"
	"github.com/addon-operator/addon-operator/pkg/operator/configwatch"
	"github.com/addon-operator/addon-operator/pkg/queue"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// newConfigWatch builds the configuration watch, its source with the
// operator's checks, handing what it decides to the main queue.
func (o *Operator) newConfigWatch(deps Deps) *configwatch.Watch {
	var settings configwatch.SettingsEvents
	if ev, ok := deps.Events.(configwatch.SettingsEvents); ok {
		settings = ev
	}
	return configwatch.New(configwatch.Options{
		Source: deps.Config(o.configChecks()), Queue: configQueue{o.main}, Store: o.store, Modules: o.modules,
		LastApplied: deps.LastApplied, ConfigMapEvents: deps.ConfigMapEvents, SettingsEvents: settings, Recorder: o.recorder,
		Namespace: o.opts.Namespace, ConfigMap: o.opts.Config.ConfigMap, EmptyWhenMissing: o.opts.Config.EmptyWhenMissing(),
		Clock: o.clock, Logger: o.log,
	})
}

// configChecks are the checks a configuration source that checks what it
// reads is built with: which modules exist, and whether settings are valid.
func (o *Operator) configChecks() config.Checks {
	return config.Checks{
		Known:    o.checks.HasModule,
		Validate: func(c *config.Config) (map[string]error, error) { return o.checks.Validate(c, admission.Own) },
	}
}

// configQueue is the main queue as the configuration watch hands it its
// decisions.
type configQueue struct{ main *queue.Queue[task] }

// Apply puts a configuration at the head of the main queue, in place of
// any still waiting there: each is the whole configuration, so only the
// latest matters, and an older one handled after it would put stale
// values back in force. The watch's goroutine is the only one that queues
// configurations, so removing and pushing need no lock together.
func (q configQueue) Apply(c *config.Config) {
	q.main.Remove(is[applyConfigTask])
	q.main.PushFront(applyConfigTask{config: c})
}

// Start queues the startup sequence.
func (q configQueue) Start() { q.main.PushBack(startupTask{}) }

// Conditions returns what the operator works around now: the ConfigMap's
// deletion and the rejection of its content, and releases it left in
// place as not its own, each with what the operator does about it.
func (o *Operator) Conditions() []status.Condition {
	conds := o.cfg.Health().Conditions()
	if c := o.foreign.Load(); c != nil {
		conds = append(conds, *c)
	}
	return conds
}

// queueModuleRun asks for a run of the module because its inputs changed
// (its ConfigMap section, its values): a module failing and waiting for its
// backoff runs at once. A run already pending absorbs it.
func (o *Operator) queueModuleRun(name string) {
	o.pool.RetryNow(name, nil)
}
