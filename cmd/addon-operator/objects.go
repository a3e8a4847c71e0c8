package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/sync/errgroup"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/clock"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/kube/moduleobject"
	"github.com/addon-operator/addon-operator/pkg/logkey"
	"github.com/addon-operator/addon-operator/pkg/metrics"
	"github.com/addon-operator/addon-operator/pkg/operator/admission"
)

// Values of --config-source.
const (
	configSourceConfigMap    = "configmap"
	configSourceModuleConfig = "moduleconfig"
)

// apiOptions are the flags of the addon-operator.io API: Module objects
// and the configuration source.
type apiOptions struct {
	moduleObjects bool
	configSource  string
	// redact removes secrets from Module objects' errors and messages.
	redact func(string) string
}

func newAPIOptions() apiOptions {
	return apiOptions{moduleObjects: true, configSource: configSourceConfigMap}
}

func (o *apiOptions) bindFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.moduleObjects, "module-objects", o.moduleObjects,
		"show every module as a cluster-scoped Module object (addon-operator.io/v1alpha1) with its phase and conditions; "+
			"without the CRD or the rights the operator runs on and says so once (env ADDON_OPERATOR_MODULE_OBJECTS)")
	fs.StringVar(&o.configSource, "config-source", o.configSource,
		"where modules' settings and Enabled switches come from: \"configmap\" (the ConfigMap of --config-map) or "+
			"\"moduleconfig\" (ModuleConfig objects, addon-operator.io/v1alpha1; \"global\" holds the global settings) "+
			"(env ADDON_OPERATOR_CONFIG_SOURCE)")
}

func (o *apiOptions) validate() error {
	if o.configSource != configSourceConfigMap && o.configSource != configSourceModuleConfig {
		return fmt.Errorf("--config-source must be %q or %q, got %q", configSourceConfigMap, configSourceModuleConfig, o.configSource)
	}
	return nil
}

// moduleObjectWriter returns the Module objects' writer, nil when they
// are off.
func (o *apiOptions) moduleObjectWriter(dyn dynamic.Interface, namespace string, rec *metrics.Recorder, log *slog.Logger, src *sourceChoice) *moduleobject.Writer {
	if !o.moduleObjects {
		return nil
	}
	opts := moduleobject.Options{Dynamic: dyn, Namespace: namespace, Clock: clock.RealClock{}, Logger: log, Metrics: rec, Redact: o.redact}
	if src != nil {
		opts.ConfigSource = src.name
	}
	return moduleobject.New(opts)
}

// sourceChoice is which source a configSource chose: the ModuleConfig
// objects or the ConfigMap. It is built before the source and the Module
// objects' writer, which names the source in force.
type sourceChoice struct {
	// moduleConfigs is set once Run chose the ModuleConfig objects.
	moduleConfigs atomic.Bool
}

// name names the source in force: "moduleconfig" or "configmap".
func (c *sourceChoice) name() string {
	if c.moduleConfigs.Load() {
		return configSourceModuleConfig
	}
	return configSourceConfigMap
}

// configSource is the source of --config-source=moduleconfig: at Run it
// checks that ModuleConfig objects can be listed and watches them, or,
// without the CRD or the rights, says so once and watches the ConfigMap,
// passing the chosen source's events on. Write goes to whichever source
// Run chose; the operator writes only after the first event, so after the
// choice.
type configSource struct {
	configMap *config.Source
	dyn       dynamic.Interface
	// events is what Run passes on, made by newConfigSource.
	events chan config.Event
	log    *slog.Logger
	// checks answer which modules exist and whether settings are valid.
	checks config.Checks
	// lastApplied is the configuration saved before this start: objects
	// rejected at the first reading keep their part of it. Nil: none.
	lastApplied *config.LastApplied

	chosen atomic.Pointer[configWriter]
	choice *sourceChoice
}

// newConfigSource returns the source of --config-source=moduleconfig,
// falling back to configMap, that records its choice in choice.
func newConfigSource(configMap *config.Source, dyn dynamic.Interface, checks config.Checks, last *config.LastApplied, choice *sourceChoice, log *slog.Logger) *configSource {
	return &configSource{configMap: configMap, dyn: dyn, events: make(chan config.Event), log: log, checks: checks, lastApplied: last, choice: choice}
}

// Events is the channel Run passes the chosen source's events on.
func (s *configSource) Events() <-chan config.Event { return s.events }

type configWriter interface {
	Write(ctx context.Context, edit config.Edit) error
}

func (s *configSource) Run(ctx context.Context) error {
	for {
		ok, reason, err := config.Available(ctx, s.dyn)
		if err == nil {
			if !ok {
				s.log.Warn("moduleconfig source off: configuration comes from the ConfigMap",
					slog.String(logkey.Reason, "ModuleConfig objects cannot be listed"), logkey.Err(reason))
				var w configWriter = s.configMap
				s.chosen.Store(&w)
				return s.forward(ctx, s.configMap)
			}
			last, ok := s.loadLastApplied(ctx)
			if !ok {
				return nil
			}
			src := config.NewModuleConfigSource(config.ModuleConfigOptions{
				Dynamic: s.dyn, Known: s.checks.Known, Validate: s.checks.Validate, Logger: s.log,
				LastApplied: last,
			})
			var w configWriter = src
			s.chosen.Store(&w)
			s.choice.moduleConfigs.Store(true)
			return s.forward(ctx, src)
		}
		s.log.Warn("moduleconfigs not listed, will retry", logkey.Err(err))
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(5 * time.Second):
		}
	}
}

// forward runs src until ctx is done, passing each of its events on.
func (s *configSource) forward(ctx context.Context, src admission.ConfigWatch) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return src.Run(ctx) })
	g.Go(func() error {
		in := src.Events()
		for {
			select {
			case <-ctx.Done():
				return nil
			case ev := <-in:
				select {
				case s.events <- ev:
				case <-ctx.Done():
					return nil
				}
			}
		}
	})
	return g.Wait()
}

// loadLastApplied reads the saved configuration, retrying while the API
// does not answer; an unreadable one is none (the operator says so). It
// returns false once ctx is done.
func (s *configSource) loadLastApplied(ctx context.Context) (*config.Config, bool) {
	if s.lastApplied == nil {
		return nil, true
	}
	for {
		c, err := s.lastApplied.Load(ctx)
		if err == nil || errors.Is(err, config.ErrLastAppliedUnreadable) {
			return c, true
		}
		select {
		case <-ctx.Done():
			return nil, false
		case <-time.After(5 * time.Second):
		}
	}
}

func (s *configSource) Write(ctx context.Context, edit config.Edit) error {
	w := s.chosen.Load()
	if w == nil {
		return errors.New("no configuration source chosen yet")
	}
	return (*w).Write(ctx, edit)
}
