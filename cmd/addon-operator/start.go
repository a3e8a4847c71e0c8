package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/sync/errgroup"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientmetrics "k8s.io/client-go/tools/metrics"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/addon-operator/addon-operator/pkg/apihealth"
	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/helm"
	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/kube"
	"github.com/addon-operator/addon-operator/pkg/kube/drift"
	"github.com/addon-operator/addon-operator/pkg/kube/event"
	"github.com/addon-operator/addon-operator/pkg/kube/monitor"
	"github.com/addon-operator/addon-operator/pkg/kube/patch"
	"github.com/addon-operator/addon-operator/pkg/kube/readiness"
	"github.com/addon-operator/addon-operator/pkg/logkey"
	"github.com/addon-operator/addon-operator/pkg/metrics"
	"github.com/addon-operator/addon-operator/pkg/operator"
	"github.com/addon-operator/addon-operator/pkg/operator/admission"
	"github.com/addon-operator/addon-operator/pkg/operator/configwatch"
	"github.com/addon-operator/addon-operator/pkg/operator/inspect"
	"github.com/addon-operator/addon-operator/pkg/operator/options"
	"github.com/addon-operator/addon-operator/pkg/operator/pages"
	"github.com/addon-operator/addon-operator/pkg/redact"
	"github.com/addon-operator/addon-operator/pkg/release/weights"
	"github.com/addon-operator/addon-operator/pkg/schedule"
	"github.com/addon-operator/addon-operator/pkg/server"
	"github.com/addon-operator/addon-operator/pkg/webhook"
)

// weightedReleases is the Helm client together with what creates the
// objects of a release's lower werf.io/weight values ahead of it (see
// release.WeightCreator).
type weightedReleases struct {
	*helm.Client
	*weights.Creator
}

// shutdownGrace bounds how long the operator may take to stop after
// SIGTERM: running hooks get SIGTERM, then SIGKILL after hook.DefaultWaitDelay.
const shutdownGrace = 30 * time.Second

// Client-side rate limit defaults: none, as SIG API Machinery advises for
// servers with API priority and fairness (every supported version), which
// queues what is too much on the server. A limit, when set, paces every
// client but leader election's: 100 modules converge in 17.5 s at 100 per
// second and 5.8 s without (docs/benchmarks.md).
const (
	defaultKubeQPS   = 0
	defaultKubeBurst = 200
)

// startOptions are the flags of the start command.
type startOptions struct {
	operator    options.Options
	helm        helm.Options
	leader      leaderOptions
	server      server.Options
	webhook     webhook.Options
	api         apiOptions
	moduleGuard moduleGuardOptions
	kubeconfig  string
	kubeContext string
	kubeQPS     float32
	kubeBurst   int
	logLevel    string
	logType     string
	// gcPercent is --gc-percent; gcPercentSet tells whether it was given
	// (see applyGCPercent).
	gcPercent    int
	gcPercentSet bool
	// establishedMetrics also serves the established operator's metric
	// names on /metrics.
	establishedMetrics bool
	// redactor removes secret values from what leaves the process:
	// Module objects, Events, the status page, webhook answers.
	redactor *redact.Redactor
}

func newStartCommand() *cobra.Command {
	o := &startOptions{operator: options.Default(), leader: newLeaderOptions(), server: server.DefaultOptions(), webhook: webhook.DefaultOptions(),
		api: newAPIOptions(), logLevel: "info", logType: "text", redactor: redact.New()}
	cmd := &cobra.Command{
		Use:   "start",
		Short: "Run the operator: converge modules and react to ConfigMap changes",
		Long: `Run the operator against the cluster of --kubeconfig (in-cluster credentials when
empty). It discovers modules and global hooks, reads the ConfigMap, runs global
onStartup hooks, converges (beforeAll hooks, enabled modules, Helm releases,
afterAll hooks), then reacts to ConfigMap changes until SIGTERM or SIGINT.

Every flag falls back to the environment variable named in its help, then to
its default.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := applyEnv(cmd.Flags(), os.LookupEnv); err != nil {
				return err
			}
			o.gcPercentSet = cmd.Flags().Changed("gc-percent")
			return o.run(cmd.Context())
		},
	}
	fs := cmd.Flags()
	bindOperatorFlags(fs, &o.operator)
	o.helm.BindFlags(fs)
	o.leader.bindFlags(fs)
	o.server.BindFlags(fs)
	o.webhook.BindFlags(fs)
	o.api.bindFlags(fs)
	o.moduleGuard.bindFlags(fs)
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", kubeconfigUsage+"; in-cluster credentials when empty (env KUBE_CONFIG, KUBECONFIG)")
	fs.StringVar(&o.kubeContext, "context", "", contextUsage+" (env KUBE_CONTEXT)")
	aliasFlag(fs, "kube-config", "kubeconfig")
	aliasFlag(fs, "kube-context", "context")
	fs.Float32Var(&o.kubeQPS, "kube-client-qps", defaultKubeQPS, "client-side limit of requests per second to the API server, all of the operator's clients together (leader election apart); 0 or less: none, the server's priority and fairness applies (env ADDON_OPERATOR_KUBE_CLIENT_QPS, KUBE_CLIENT_QPS)")
	fs.IntVar(&o.kubeBurst, "kube-client-burst", defaultKubeBurst, "requests that may go at once before --kube-client-qps paces them (env ADDON_OPERATOR_KUBE_CLIENT_BURST, KUBE_CLIENT_BURST)")
	fs.StringVar(&o.logLevel, "log-level", o.logLevel, "debug, info, warn or error (env LOG_LEVEL)")
	fs.StringVar(&o.logType, "log-type", o.logType, "text or json (env LOG_TYPE)")
	fs.IntVar(&o.gcPercent, "gc-percent", defaultGCPercent, "garbage collector target: the heap grows this many percent of the live heap between "+
		"collections; lower holds less memory for more CPU. Without this flag Go's GOGC, when set, applies (env ADDON_OPERATOR_GC_PERCENT)")
	fs.BoolVar(&o.establishedMetrics, "established-metric-names", false, "also serve, on /metrics, the established addon-operator's metric names "+
		"derived from ours, for its dashboards and alerts (env ADDON_OPERATOR_ESTABLISHED_METRIC_NAMES)")
	return cmd
}

// envFallbacks names, per flag, the environment variables read when the
// flag is not given, first match wins. Older names stay for compatibility.
func envFallbacks() map[string][]string {
	m := map[string][]string{
		"modules-dir":              {"ADDON_OPERATOR_MODULES_DIR", "MODULES_DIR"},
		"global-hooks-dir":         {"ADDON_OPERATOR_GLOBAL_HOOKS_DIR", "GLOBAL_HOOKS_DIR"},
		"unnumbered-modules-order": {"ADDON_OPERATOR_UNNUMBERED_MODULES_ORDER", "UNNUMBERED_MODULES_ORDER"},
		"namespace":                {"ADDON_OPERATOR_NAMESPACE"},
		"config-map":               {"ADDON_OPERATOR_CONFIG_MAP"},
		"config-map-deleted":       {"ADDON_OPERATOR_CONFIG_MAP_DELETED"},
		"config-missing":           {"ADDON_OPERATOR_CONFIG_MISSING"},
		"tmp-dir":                  {"ADDON_OPERATOR_TMP_DIR"},
		"hook-timeout":             {"ADDON_OPERATOR_HOOK_TIMEOUT"},
		"hook-log-max-bytes":       {"ADDON_OPERATOR_HOOK_LOG_MAX_BYTES"},
		"heal-drift":               {"ADDON_OPERATOR_HEAL_DRIFT"},
		"drift-debounce":           {"ADDON_OPERATOR_DRIFT_DEBOUNCE"},
		"drift-resync":             {"ADDON_OPERATOR_DRIFT_RESYNC"},
		"remediation":              {"ADDON_OPERATOR_REMEDIATION"},
		"remediation-retries":      {"ADDON_OPERATOR_REMEDIATION_RETRIES"},
		"retry-delay":              {"ADDON_OPERATOR_RETRY_DELAY"},
		"retry-max-delay":          {"ADDON_OPERATOR_RETRY_MAX_DELAY"},
		"helm-history-max":         {"HELM_HISTORY_MAX"},
		"helm-timeout":             {"HELM_TIMEOUT"},
		"helm-driver":              {"HELM_DRIVER"},
		"adopt-objects":            {"ADDON_OPERATOR_ADOPT_OBJECTS"},
		"adopt-unlabeled-releases": {"ADDON_OPERATOR_ADOPT_UNLABELED_RELEASES"},
		"kubeconfig":               {"KUBE_CONFIG", "KUBECONFIG"},
		"context":                  {"KUBE_CONTEXT"},
		"kube-client-qps":          {"ADDON_OPERATOR_KUBE_CLIENT_QPS", "KUBE_CLIENT_QPS"},
		"gc-percent":               {"ADDON_OPERATOR_GC_PERCENT"},
		"kube-client-burst":        {"ADDON_OPERATOR_KUBE_CLIENT_BURST", "KUBE_CLIENT_BURST"},
		"log-level":                {"LOG_LEVEL"},
		"log-type":                 {"LOG_TYPE"},
		"established-metric-names": {"ADDON_OPERATOR_ESTABLISHED_METRIC_NAMES"},
		"listen-address":           {"ADDON_OPERATOR_LISTEN_ADDRESS"},
		"debug-socket":             {"ADDON_OPERATOR_DEBUG_SOCKET", "DEBUG_UNIX_SOCKET"},
		"debug-http":               {"ADDON_OPERATOR_DEBUG_HTTP"},
		"metrics-auth":             {"ADDON_OPERATOR_METRICS_AUTH"},
		"status-page":              {"ADDON_OPERATOR_STATUS_PAGE"},
		"listen-tls":               {"ADDON_OPERATOR_LISTEN_TLS"},
		"module-workers":           {"ADDON_OPERATOR_MODULE_WORKERS"},
		"readiness-timeout":        {"ADDON_OPERATOR_READINESS_TIMEOUT"},
		"ha":                       {"ADDON_OPERATOR_HA"},
		"ha-lease-name":            {"ADDON_OPERATOR_HA_LEASE_NAME"},
		"ha-identity":              {"ADDON_OPERATOR_POD", "POD_NAME"},
		"ha-lease-duration":        {"ADDON_OPERATOR_HA_LEASE_DURATION"},
		"ha-renew-deadline":        {"ADDON_OPERATOR_HA_RENEW_DEADLINE"},
		"ha-retry-period":          {"ADDON_OPERATOR_HA_RETRY_PERIOD"},
		"module-objects":           {"ADDON_OPERATOR_MODULE_OBJECTS"},
		"config-source":            {"ADDON_OPERATOR_CONFIG_SOURCE"},
	}
	maps.Copy(m, webhookEnvFallbacks())
	maps.Copy(m, moduleGuardEnvFallbacks())
	return m
}

// applyEnv sets every flag not given on the command line from its first
// set environment variable.
func applyEnv(fs *pflag.FlagSet, lookup func(string) (string, bool)) error {
	var errs []error
	for flag, names := range envFallbacks() {
		f := fs.Lookup(flag)
		if f == nil || f.Changed {
			continue
		}
		for _, name := range names {
			v, ok := lookup(name)
			if !ok || v == "" {
				continue
			}
			if err := fs.Set(flag, v); err != nil {
				errs = append(errs, fmt.Errorf("environment variable %s=%q: %w", name, v, err))
			}
			break
		}
	}
	return errors.Join(errs...)
}

func newLogger(level, format string) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lvl}
	switch format {
	case "json":
		return slog.New(slog.NewJSONHandler(os.Stderr, opts)), nil
	case "text", "color":
		return slog.New(slog.NewTextHandler(os.Stderr, opts)), nil
	default:
		return nil, fmt.Errorf("--log-type %q: want text or json", format)
	}
}

func (o *startOptions) restConfig() (*rest.Config, error) {
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: o.kubeconfig}
	overrides := &clientcmd.ConfigOverrides{CurrentContext: o.kubeContext}
	if o.kubeconfig == "" {
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("no --kubeconfig given and not in a cluster: %w", err)
		}
		return cfg, nil
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig %s: %w", o.kubeconfig, err)
	}
	return cfg, nil
}

// validate checks every option group's flags.
func (o *startOptions) validate() error {
	if err := o.operator.Validate(); err != nil {
		return err
	}
	if err := o.leader.validate(); err != nil {
		return err
	}
	if err := errors.Join(o.server.Validate(), o.webhook.Validate()); err != nil {
		return err
	}
	if err := o.api.validate(); err != nil {
		return err
	}
	if o.gcPercent < 1 {
		return fmt.Errorf("--gc-percent %d: want at least 1", o.gcPercent)
	}
	if o.kubeQPS > 0 && o.kubeBurst < 1 {
		return fmt.Errorf("--kube-client-burst %d: want at least 1 with --kube-client-qps %g", o.kubeBurst, o.kubeQPS)
	}
	return nil
}

func (o *startOptions) run(ctx context.Context) error {
	log, err := newLogger(o.logLevel, o.logType)
	if err != nil {
		return err
	}
	// Errors may quote what the API server refused of a Secret.
	log = slog.New(o.redactor.Handler(log.Handler()))
	if err := o.validate(); err != nil {
		return err
	}
	applyGCPercent(log, o.gcPercent, o.gcPercentSet, os.LookupEnv)
	restCfg, err := o.restConfig()
	if err != nil {
		return err
	}
	rec, hookMetrics := metrics.NewRecorder(), metrics.NewHookMetrics()
	// Leader election has a client of its own, so that the operator's
	// requests cannot throttle lease renewals; the API server's health
	// probe shares it, for the same reason.
	electionClient, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return fmt.Errorf("leader election client: %w", err)
	}
	var onAPIBack []func() // set below, before the tracker runs
	apiHealth := trackAPIHealth(electionClient.Discovery().RESTClient(), rec, log, &onAPIBack)
	klog.SetSlogLogger(slog.New(outageQuiet{log.Handler(), apiHealth.Down}).With(slog.String(logkey.Component, "client-go")))
	webhooks, err := o.webhookConfig(withRateLimit(restCfg, o.kubeQPS, o.kubeBurst))
	if err != nil {
		return err
	}
	op, events, err := o.wireGuarded(ctx, restCfg, log, rec, hookMetrics, webhooks)
	if err != nil {
		return err
	}
	// After an outage, what failed on it is tried again at once.
	onAPIBack = []func(){op.RetryFailedNow, events.Resume}
	so := o.server
	so.Metrics, so.HookMetrics = rec.Handler(), hookMetrics.Handler()
	if o.establishedMetrics {
		so.Metrics = rec.CompatHandler(time.Now)
	}
	so.Redact = o.redactor.String
	so.Problems = append(so.Problems, apiHealth)
	if webhooks != nil {
		so.Problems = append(so.Problems, op.Webhooks())
	}
	if so.Protected() {
		authClient, err := kubernetes.NewForConfig(restCfg)
		if err != nil {
			return fmt.Errorf("http auth client: %w", err)
		}
		so.Auth = server.NewKubeAuth(authClient, clock.RealClock{})
	}
	leading := new(atomic.Bool)
	srv := server.New(so, standbyReady{op, op.Pages(), op.Inspect(), leading}, log)
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The server runs on every replica, leading or not, so probes answer;
	// /readyz is 503 until this replica has converged.
	done := make(chan error, 1)
	go func() {
		g, gctx := errgroup.WithContext(ctx)
		g.Go(func() error { return srv.Run(gctx) })
		g.Go(func() error { return apiHealth.Run(gctx) })
		g.Go(func() error { return op.Webhooks().Run(gctx) }) // on every replica, leading or not
		g.Go(func() error {
			return runLeading(gctx, o.leader, electionClient, o.operator.Namespace, log, func(ctx context.Context) error {
				leading.Store(true)
				defer leading.Store(false)
				return op.Run(ctx)
			})
		})
		done <- g.Wait()
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down", slog.Duration(logkey.Duration, shutdownGrace))
	select {
	case err := <-done:
		log.Info("stopped")
		return err
	case <-time.After(shutdownGrace):
		return fmt.Errorf("did not stop within %s", shutdownGrace)
	}
}

// withRateLimit returns a copy of cfg whose clients all share one token
// bucket of qps requests per second and burst, or are not limited when qps
// is 0 or less. (Left to itself, client-go gives every client a bucket of
// its own, of 5 per second.)
func withRateLimit(cfg *rest.Config, qps float32, burst int) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.RateLimiter = nil
	if qps <= 0 {
		cfg.QPS = -1
		return cfg
	}
	cfg.QPS, cfg.Burst = qps, burst
	cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(qps, burst)
	return cfg
}

// wire builds the operator with its real dependencies; it returns the
// operator's Event recorder too.
func (o *startOptions) wire(restCfg *rest.Config, log *slog.Logger, rec *metrics.Recorder, hookMetrics *metrics.HookMetrics, webhooks *admission.Config) (*operator.Operator, *event.Recorder, error) {
	client, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return nil, nil, fmt.Errorf("kubernetes client: %w", err)
	}
	o.readKubernetesVersion(client, log)
	// One discovery cache serves Helm, monitors, the patcher, healing and
	// drift checks. A kind it misses makes it read discovery again (at most
	// once a second), so CRDs installed later are found.
	disc := kube.NewDiscovery(client.Discovery(), 0, clock.RealClock{})
	kinds := disc.Resolver()
	hopts := o.helm
	hopts.RESTConfig, hopts.Namespace, hopts.Logger = restCfg, o.operator.Namespace, log
	hopts.Discovery, hopts.Mapper = disc.Client(), disc.RESTMapper()
	hopts.OnLocalAnswer = rec.KubeReadAnsweredLocally
	hopts.OnRepeatedRead = rec.KubeReadRepeatedLocally
	// The watch of release objects also tells Helm's skip check and the
	// drift check which objects exist and which changed.
	heal, healEvents, driftChanges, err := newHealWatcher(restCfg, kinds, o.operator.Namespace, o.helm.Driver, log)
	if err != nil {
		return nil, nil, err
	}
	hopts.Watched = heal
	// The watch of release records answers Owned without a request.
	hopts.Records = heal.records
	releases, err := helm.New(hopts)
	if err != nil {
		return nil, nil, err
	}
	if err := o.prepareTempDir(); err != nil {
		return nil, nil, err
	}
	log.Info("hook files", slog.String(logkey.Path, o.operator.Hooks.TempDir), slog.Bool(logkey.Memory, hook.IsMemory(o.operator.Hooks.TempDir)))
	dyn, err := dynamic.NewForConfig(restCfg)
	if err != nil {
		return nil, nil, fmt.Errorf("dynamic client: %w", err)
	}
	monitorEvents := make(chan monitor.Event)
	monitors, err := monitor.NewMonitors(monitor.Options{Dynamic: dyn, Kinds: kinds, Log: log, Events: monitorEvents})
	if err != nil {
		return nil, nil, err
	}
	crds, err := newCRDApplier(restCfg, disc)
	if err != nil {
		return nil, nil, err
	}
	ticks := make(chan schedule.Tick)
	recorder := event.NewRecorder(client, o.operator.Namespace, o.operator.Config.ConfigMap).WithMetrics(rec).WithRedactor(o.redactor.String)
	cfgMap := config.NewSource(client, o.operator.Namespace, o.operator.Config.ConfigMap, log)
	deps := operator.Deps{
		Hooks:         &hook.Executor{Logger: log, Timeout: o.operator.Hooks.Timeout, TempDir: o.operator.Hooks.TempDir, MaxLogBytes: o.operator.Hooks.LogMaxBytes},
		Releases:      weightedReleases{Client: releases, Creator: weights.NewCreator(dyn, kinds)},
		Config:        func(config.Checks) configwatch.Source { return cfgMap },
		Monitors:      monitors,
		MonitorEvents: monitorEvents,
		Scheduler:     schedule.New(clock.RealClock{}, ticks),
		Ticks:         ticks,
		Patcher:       patch.NewPatcher(dyn, kinds, log),
		Events:        recorder,
		Healer:        heal,
		HealEvents:    healEvents,
		DriftChanges:  driftChanges,
		Drift:         drift.NewChecker(dyn, kinds, log).WithNamespace(o.operator.Namespace).WithWatched(heal),
		CRDs:          crds,
		Readiness:     readiness.NewChecker(dyn, kinds, clock.RealClock{}),
		Namespaces:    kube.NewNamespaces(client),
		HookMetrics:   hookMetrics,
		Recorder:      rec,
		Redactor:      o.redactor,
		Clock:         clock.RealClock{},
		Logger:        log,

		// The same recorder: its Events regard the ConfigMap.
		ConfigMapEvents: recorder,
		LastApplied:     config.NewLastApplied(client, o.operator.Namespace, o.operator.Config.ConfigMap+config.LastAppliedSuffix),
	}
	o.wireStandby(webhooks, client, dyn, log)
	deps.Webhooks = webhooks
	op, err := o.newOperator(deps, cfgMap, dyn, rec, recorder, log)
	return op, recorder, err
}

// readKubernetesVersion reads the cluster's version, which module.yaml's
// requirements.kubernetes are checked against.
func (o *startOptions) readKubernetesVersion(client kubernetes.Interface, log *slog.Logger) {
	v, err := client.Discovery().ServerVersion()
	if err != nil {
		log.Warn("cluster version not read: module.yaml requirements.kubernetes are not checked", logkey.Err(err))
		return
	}
	o.operator.Discovery.KubernetesVersion = v.GitVersion
}

// newOperator makes the operator with the configuration source and the
// Module objects its flags choose.
func (o *startOptions) newOperator(deps operator.Deps, cfgMap *config.Source, dyn dynamic.Interface,
	rec *metrics.Recorder, recorder *event.Recorder, log *slog.Logger,
) (*operator.Operator, error) {
	var choice *sourceChoice
	if o.api.configSource == configSourceModuleConfig {
		last, _ := deps.LastApplied.(*config.LastApplied) // the same Secret the operator saves to
		choice = &sourceChoice{}
		deps.Config = func(checks config.Checks) configwatch.Source {
			return newConfigSource(cfgMap, dyn, checks, last, choice, log)
		}
	}
	o.api.redact = o.redactor.String
	if w := o.api.moduleObjectWriter(dyn, o.operator.Namespace, rec, log, choice); w != nil {
		deps.ModuleObjects = w
		recorder.WithModuleRefs(w.Ref)
	}
	return operator.New(o.operator, deps)
}

// prepareTempDir makes --tmp-dir absolute and creates it: hooks run in
// the operator's working directory, and their files' paths must not
// depend on it.
func (o *startOptions) prepareTempDir() error {
	if o.operator.Hooks.TempDir == "" {
		o.operator.Hooks.TempDir, _ = hook.DefaultTempDir()
	}
	tmp, err := filepath.Abs(o.operator.Hooks.TempDir)
	if err != nil {
		return fmt.Errorf("--tmp-dir: %w", err)
	}
	o.operator.Hooks.TempDir = tmp
	if err := os.MkdirAll(o.operator.Hooks.TempDir, 0o700); err != nil {
		return fmt.Errorf("create --tmp-dir: %w", err)
	}
	return nil
}

// standbyReady reports a standby replica (one not leading) as ready: it is
// ready to take over, and a rollout or drain must not wait for it to
// converge, which it only does once it leads. The leader is ready after its
// first converge.
type standbyReady struct {
	*operator.Operator
	*pages.Pages
	*inspect.View
	leading *atomic.Bool
}

func (s standbyReady) Ready() bool { return !s.leading.Load() || s.Operator.Ready() }

// trackAPIHealth returns the API server's health tracker, fed with the
// results of every client's requests (registered with client-go together
// with the request metrics) and probing with client. When an outage ends
// it calls the functions *onBack holds then.
func trackAPIHealth(client rest.Interface, rec *metrics.Recorder, log *slog.Logger, onBack *[]func()) *apihealth.Tracker {
	t := apihealth.New(apihealth.Options{
		Client: client, Metrics: rec, Logger: log,
		OnChange: func(t apihealth.Transition) {
			if t.Up {
				for _, f := range *onBack {
					f()
				}
			}
		},
	})
	kubeMetrics := rec.KubeClientMetrics()
	kubeMetrics.RequestResult = resultTee{kubeMetrics.RequestResult, t}
	clientmetrics.Register(kubeMetrics)
	return t
}

// resultTee gives client-go's request results to the metrics and to the
// API server's health tracker.
type resultTee struct {
	metrics, health clientmetrics.ResultMetric
}

func (t resultTee) Increment(ctx context.Context, code, method, host string) {
	t.metrics.Increment(ctx, code, method, host)
	t.health.Increment(ctx, code, method, host)
}

// bindOperatorFlags adds the operator's flags to fs, its --namespace with
// the -n every command has, its help saying whose namespace it is.
func bindOperatorFlags(fs *pflag.FlagSet, o *options.Options) {
	own := pflag.NewFlagSet("operator", pflag.ContinueOnError)
	o.BindFlags(own)
	own.VisitAll(func(f *pflag.Flag) {
		if f.Name == "namespace" {
			f.Shorthand = "n"
			f.Usage = namespaceUsagePrefix + ": of its ConfigMap and of every module's Helm release (env ADDON_OPERATOR_NAMESPACE; required)"
		}
		fs.AddFlag(f)
	})
}
