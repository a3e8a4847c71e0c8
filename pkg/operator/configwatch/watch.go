// Package configwatch is the configuration watch: it reads the events of
// the configuration source (the ConfigMap or the ModuleConfig objects),
// decides which configuration is put in force, holding the last accepted
// one while the source is missing, configures nothing unconfirmed or is
// invalid, and hands each to apply to the main queue. It saves what the
// main queue applied and writes hooks' config patches back to the source.
package configwatch

import (
	"context"
	"log/slog"

	"golang.org/x/sync/errgroup"
	"k8s.io/utils/clock"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/confighealth"
	"github.com/addon-operator/addon-operator/pkg/logkey"
	"github.com/addon-operator/addon-operator/pkg/metrics"
	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/store"
)

// Source is the configuration source: *config.Source, or the command's
// choice between ModuleConfig objects and the ConfigMap. It makes the
// channel Events returns and alone sends on it, while Run runs.
type Source interface {
	Run(ctx context.Context) error
	Events() <-chan config.Event
	Write(ctx context.Context, edit config.Edit) error
}

// Queue is where the watch's decisions go: the operator's main queue.
type Queue interface {
	// Apply puts c in force next, in place of any configuration still
	// waiting to be applied: each is the whole configuration.
	Apply(c *config.Config)
	// Start starts the startup sequence; the watch calls it once, after
	// the first event.
	Start()
}

// LastApplied saves the last accepted configuration and reads it back
// after a restart; *config.LastApplied is the real one.
type LastApplied interface {
	Load(ctx context.Context) (*config.Config, error)
	Save(ctx context.Context, c *config.Config) error
	Name() string
}

// SettingsEvents records resets of settings as Kubernetes Events;
// *event.Recorder is one.
type SettingsEvents interface {
	SettingsReset(module string, keys []string)
}

// Options are what a Watch is built with.
type Options struct {
	Source Source
	Queue  Queue
	// Store takes hooks' config patches (WritePatch); Modules name the
	// modules whose settings a change removed (ReportResets).
	Store   *store.Store
	Modules *module.Set
	// LastApplied keeps the last accepted configuration across restarts;
	// nil keeps none: a missing source at start is then an empty
	// configuration.
	LastApplied LastApplied
	// ConfigMapEvents, SettingsEvents and Recorder may be nil.
	ConfigMapEvents confighealth.Events
	SettingsEvents  SettingsEvents
	Recorder        *metrics.Recorder
	// Namespace and ConfigMap name the ConfigMap in logs, Events and
	// conditions.
	Namespace, ConfigMap string
	// EmptyWhenMissing makes a missing source an empty configuration
	// (--config-missing=empty) instead of holding the last one.
	EmptyWhenMissing bool
	Clock            clock.WithDelayedExecution
	Logger           *slog.Logger
}

// Watch is the configuration watch's owner. Its Run goroutine owns saved,
// savedErr and accepted; health is shared with the main queue worker and
// module runs under the tracker's own mutex.
type Watch struct {
	opts   Options
	log    *slog.Logger
	health *confighealth.Tracker
	// saved (or savedErr) is what LastApplied held at start; accepted is
	// the configuration the watch put in force last.
	saved    *config.Config
	savedErr error
	accepted *config.Config
}

// New builds the watch of opts.Source.
func New(opts Options) *Watch {
	return &Watch{
		opts: opts, log: opts.Logger,
		health: confighealth.New(confighealth.Options{
			Namespace: opts.Namespace, Name: opts.ConfigMap, KeepDeleted: !opts.EmptyWhenMissing,
			Clock: opts.Clock, Logger: opts.Logger, Events: opts.ConfigMapEvents, Recorder: opts.Recorder,
		}),
	}
}

// Health is what is wrong with the configuration now: the main queue
// worker records what it accepts and rejects there, module runs read
// their sections' errors, status shows its conditions.
func (w *Watch) Health() *confighealth.Tracker { return w.health }

// Run runs the source and turns its events into what the main queue
// applies, until ctx is done. The first event, valid or not, starts the
// startup sequence. The configuration saved before this start is read
// first: what the first event means depends on it.
func (w *Watch) Run(ctx context.Context) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return w.opts.Source.Run(ctx) })
	g.Go(func() error { return w.watch(ctx) })
	return g.Wait()
}

func (w *Watch) watch(ctx context.Context) error {
	if !w.loadLastApplied(ctx) {
		return nil
	}
	events := w.opts.Source.Events()
	first := true
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev := <-events:
			w.observe(ev)
			if first {
				first = false
				w.opts.Queue.Start()
			}
		}
	}
}

// Save saves c, just put in force by the main queue, for a restart to
// hold when the source is then missing. A failure is a WARN line: the
// configuration is in force all the same, and the next one applied is
// saved again.
func (w *Watch) Save(ctx context.Context, c *config.Config) {
	if w.opts.LastApplied == nil {
		return
	}
	if err := w.opts.LastApplied.Save(ctx, c); err != nil {
		w.log.Warn("last applied configuration not saved", logkey.Err(err))
	}
}
