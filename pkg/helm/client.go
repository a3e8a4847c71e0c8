package helm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/kube"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/transport"
	"k8s.io/utils/clock"

	"github.com/addon-operator/addon-operator/pkg/helm/kubeclient"
	"github.com/addon-operator/addon-operator/pkg/helm/manifest"
	"github.com/addon-operator/addon-operator/pkg/helm/objects"
	"github.com/addon-operator/addon-operator/pkg/helm/records"
	"github.com/addon-operator/addon-operator/pkg/helm/requests"
	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// ErrNotFound is returned by Client.Status for a release without any
// revision.
var ErrNotFound = errors.New("release not found")

// Client deploys modules as Helm releases in one namespace.
//
// Methods are safe for concurrent use on different releases; the caller
// serialises operations on one release (the operator runs one task per
// module at a time). The Client assumes it is the only writer of its
// releases, which leader election guarantees: Apply treats a pending
// revision as left behind by a killed process.
type Client struct {
	namespace  string
	historyMax int
	timeout    time.Duration
	log        *slog.Logger
	// adoptObjects and adoptReleases are Options.AdoptObjects and
	// Options.AdoptUnlabeledReleases.
	adoptObjects  []string
	adoptReleases bool
	// newConfig returns a fresh Helm configuration for one operation. One
	// per operation, because Helm caches the server's capabilities in it
	// for its lifetime and its kube client caches a clientset without
	// locking; the discovery cache behind them is shared (see
	// Options.DiscoveryMaxAge).
	newConfig func(debug action.DebugLog) (*action.Configuration, error)
	// watched tells which objects exist, from a watch; nil when none.
	watched objects.Watched
	// absent answers Helm's existence checks of objects claimObjects just
	// found absent or installFresh creates; nil when the caller provides
	// the getter.
	absent *requests.KnownAbsent
	// reads answers Helm's repeated reads of a release's objects within
	// one install or upgrade; nil when the caller provides the getter.
	reads *requests.RepeatedReads
	// refreshDiscovery drops the cached discovery information, after a
	// release created or deleted API kinds.
	refreshDiscovery func()
	// records is Options.Records, nil when none; recordsSyncWait bounds
	// the wait for its sync. lister lists the records with one request;
	// nil when the Client has no cluster (tests). relabelled is set by
	// ClaimUnlabeled when it changed records' labels. uninstalled holds
	// the releases Uninstall removed that the watch may still show; guarded
	// by uninstalledMu.
	records         ReleaseRecords
	recordsSyncWait time.Duration
	lister          ReleaseRecords
	relabelled      atomic.Bool
	uninstalledMu   sync.Mutex
	uninstalled     map[string]bool
	// inTheWay holds the releases whose last install found an object in
	// its way (see installFresh): they check their objects before
	// creating them, until a deployment succeeds. Guarded by inTheWayMu.
	inTheWayMu sync.Mutex
	inTheWay   map[string]bool
}

// Status is the state of a release's last revision.
type Status struct {
	// Revision is the last revision number.
	Revision int
	// State is Helm's status of that revision: deployed, failed,
	// pending-install, pending-upgrade, pending-rollback, uninstalling,
	// uninstalled, superseded or unknown.
	State string
	// Checksum is the revision's LabelChecksum, empty for revisions the
	// operator did not create.
	Checksum string
	// Owned reports whether the revision carries LabelManagedBy.
	Owned bool
}

// New returns a Client for the cluster and namespace in opts.
func New(opts Options) (*Client, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("helm options: %w", err)
	}
	opts = opts.withDefaults()
	getter := opts.Getter
	refresh := func() {}
	var absent *requests.KnownAbsent
	var reads *requests.RepeatedReads
	if getter == nil {
		absent = requests.NewKnownAbsent(opts.OnLocalAnswer)
		reads = requests.NewRepeatedReads(opts.OnRepeatedRead)
		g, err := requests.NewGetter(requests.GetterOptions{
			Config: opts.RESTConfig, Namespace: opts.Namespace, Discovery: opts.Discovery, Mapper: opts.Mapper,
			MaxAge: opts.DiscoveryMaxAge, Wrap: []transport.WrapperFunc{reads.Wrap, absent.Wrap},
		}, clock.RealClock{})
		if err != nil {
			return nil, err
		}
		getter, refresh = g, g.Refresh
	}
	restCfg, err := getter.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("helm rest config: %w", err)
	}
	var secrets corev1client.SecretInterface
	if opts.Driver == DefaultDriver {
		cs, err := kubernetes.NewForConfig(restCfg)
		if err != nil {
			return nil, fmt.Errorf("helm release records client: %w", err)
		}
		secrets = cs.CoreV1().Secrets(opts.Namespace)
	}
	newConfig := func(debug action.DebugLog) (*action.Configuration, error) {
		cfg := new(action.Configuration)
		if err := cfg.Init(getter, opts.Namespace, opts.Driver, debug); err != nil {
			return nil, fmt.Errorf("init helm: %w", err)
		}
		if secrets != nil {
			cfg.Releases.Driver = records.NewSecrets(cfg.Releases.Driver, secrets, time.Now)
		}
		// Objects without a namespace go to ours, whatever the getter's
		// kubeconfig context says.
		if kc, ok := cfg.KubeClient.(*kube.Client); ok {
			kc.Namespace = opts.Namespace
			cfg.KubeClient = kubeclient.New(kc)
		}
		cfg.Releases.MaxHistory = opts.HistoryMax
		return cfg, nil
	}
	lister, err := records.NewLister(restCfg, opts.Driver, opts.Namespace)
	if err != nil {
		return nil, err
	}
	c := newClient(opts, newConfig)
	c.refreshDiscovery = refresh
	c.absent = absent
	c.lister = lister
	c.reads = reads
	return c, nil
}

// newClient wires a Client over a configuration factory; tests pass one
// backed by Helm's memory driver and fake kube client.
func newClient(opts Options, newConfig func(action.DebugLog) (*action.Configuration, error)) *Client {
	opts = opts.withDefaults()
	return &Client{
		namespace:        opts.Namespace,
		historyMax:       opts.HistoryMax,
		timeout:          opts.Timeout,
		log:              opts.Logger.With(slog.String(logkey.Namespace, opts.Namespace)),
		adoptObjects:     slices.Clone(opts.AdoptObjects),
		adoptReleases:    opts.AdoptUnlabeledReleases,
		newConfig:        newConfig,
		refreshDiscovery: func() {},
		watched:          opts.Watched,
		records:          opts.Records,
		recordsSyncWait:  recordsSyncWait,
	}
}

// config returns a Helm configuration for one operation under ctx. Helm's
// debug output goes to the Client's logger at debug level, tagged with the
// release name.
func (c *Client) config(ctx context.Context, name string) (*action.Configuration, error) {
	log := c.log
	if name != "" {
		log = log.With(slog.String(logkey.Release, name))
	}
	debug := func(format string, args ...any) {
		if log.Enabled(ctx, slog.LevelDebug) {
			log.DebugContext(ctx, fmt.Sprintf(format, args...)) //nolint:sloglint // Helm's own message, bridged as is
		}
	}
	cfg, err := c.newConfig(debug)
	if err != nil {
		return nil, err
	}
	// The operation's own view of the release records (see
	// requests.OperationStore), over a copy: the factory may share its
	// Storage.
	store := *cfg.Releases
	store.Driver = requests.NewOperationStore(manifest.HookPolicies{Driver: store.Driver})
	cfg.Releases = &store
	return cfg, nil
}

// Status returns the state of the last revision of release name, or an
// error wrapping ErrNotFound when it has none.
func (c *Client) Status(ctx context.Context, name string) (Status, error) {
	if err := ctx.Err(); err != nil {
		return Status{}, fmt.Errorf("status of release %q: %w", name, err)
	}
	cfg, err := c.config(ctx, name)
	if err != nil {
		return Status{}, fmt.Errorf("status of release %q: %w", name, err)
	}
	last, err := lastRelease(cfg, name)
	if err != nil {
		return Status{}, err
	}
	if last == nil {
		return Status{}, fmt.Errorf("status of release %q: %w", name, ErrNotFound)
	}
	return statusOf(last), nil
}

// Owned returns the sorted names of the releases in the namespace whose
// last revision carries LabelManagedBy. Releases without it are never
// returned, so the operator never purges what it did not create. It reads
// the release records' labels only (Helm copies a release's labels onto
// its record): from Options.Records' watch without a request, else with
// one metadata LIST. A Client without a cluster decodes every record.
func (c *Client) Owned(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("list owned releases: %w", err)
	}
	owned, ok, err := c.ownedFromRecords(ctx)
	if err != nil {
		return nil, fmt.Errorf("list owned releases: %w", err)
	}
	if ok {
		return owned, nil
	}
	cfg, err := c.config(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("list owned releases: %w", err)
	}
	list := action.NewList(cfg)
	list.All = true
	list.StateMask = action.ListAll
	list.Selector = LabelManagedBy + "=" + ManagedByValue
	rels, err := list.Run()
	if err != nil {
		return nil, fmt.Errorf("list owned releases: %w", err)
	}
	names := make([]string, 0, len(rels))
	for _, rel := range rels {
		names = append(names, rel.Name)
	}
	slices.Sort(names)
	return names, nil
}

// Uninstall uninstalls release name with its chart's delete hooks and
// reports whether there was a release; (false, nil) when there was none.
// History is not kept. Helm's uninstall takes no context: ctx is checked
// before it starts, and Options.Timeout bounds its hooks.
func (c *Client) Uninstall(ctx context.Context, name string) (bool, error) {
	return c.UninstallHooks(ctx, name, 0)
}

// UninstallHooks is Uninstall with each chart delete hook awaited up to
// hookTimeout (Options.Timeout when zero), as Apply awaits install and
// upgrade hooks: a hook Job that fails or does not complete in that time
// fails it with a *kubeclient.HookError that names it and gives its last condition.
// The release is then left uninstalling, with its objects, for the next
// uninstall to retry.
func (c *Client) UninstallHooks(ctx context.Context, name string, hookTimeout time.Duration) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("uninstall release %q: %w", name, err)
	}
	cfg, err := c.config(ctx, name)
	if err != nil {
		return false, fmt.Errorf("uninstall release %q: %w", name, err)
	}
	history, err := cfg.Releases.History(name)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("uninstall release %q: read history: %w", name, err)
	}
	// Objects without a namespace in the manifest are in the release's.
	last := slices.MaxFunc(history, func(a, b *release.Release) int { return a.Version - b.Version })
	if last.Namespace != "" {
		c.inNamespace(cfg, last.Namespace)
	}
	if last.Info.Status != release.StatusDeployed {
		if err := c.spareForeign(ctx, cfg, last); err != nil {
			return false, fmt.Errorf("uninstall release %q: %w", name, err)
		}
	}
	uninstall := action.NewUninstall(cfg)
	uninstall.Timeout = c.timeout
	if hookTimeout > 0 {
		uninstall.Timeout = hookTimeout
	}
	hooks := hooksOf(cfg, "delete")
	_, err = uninstall.Run(name)
	c.noteUninstalled(name)
	if slices.ContainsFunc(history, func(r *release.Release) bool { return manifest.ExtendsAPI(r.Manifest) }) {
		c.refreshDiscovery()
	}
	if err != nil {
		return false, fmt.Errorf("uninstall release %q: %w", name, blameHook(ctx, hooks, err))
	}
	return true, nil
}

// lastRelease returns the last revision of release name, or nil when there
// is none.
func lastRelease(cfg *action.Configuration, name string) (*release.Release, error) {
	rel, err := cfg.Releases.Last(name)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read release %q: %w", name, err)
	}
	return rel, nil
}

func statusOf(rel *release.Release) Status {
	return Status{
		Revision: rel.Version,
		State:    rel.Info.Status.String(),
		Checksum: rel.Labels[LabelChecksum],
		Owned:    rel.Labels[LabelManagedBy] == ManagedByValue,
	}
}

// releaseNamespace is the namespace of r's objects: its own, else the
// Client's.
func (c *Client) releaseNamespace(r Release) string {
	if r.Namespace != "" {
		return r.Namespace
	}
	return c.namespace
}

// inNamespace makes cfg put objects without a namespace into ns; the
// release records stay where cfg keeps them.
func (c *Client) inNamespace(cfg *action.Configuration, ns string) {
	switch kc := cfg.KubeClient.(type) {
	case *kube.Client:
		kc.Namespace = ns
	case kubeclient.Client:
		kc.Namespace = ns
	}
}
