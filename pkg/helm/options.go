package helm

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	"github.com/addon-operator/addon-operator/pkg/helm/objects"
)

// Flags bound by BindFlags that messages name.
const (
	flagAdoptObjects           = "adopt-objects"
	flagAdoptUnlabeledReleases = "adopt-unlabeled-releases"
)

// Defaults applied by New to zero Options fields.
const (
	DefaultHistoryMax = 10
	DefaultTimeout    = 20 * time.Minute
	DefaultDriver     = "secret"
	// DefaultDiscoveryMaxAge is how old the server's API versions may be
	// when an operation starts.
	DefaultDiscoveryMaxAge = 10 * time.Second
)

// Options configure a Client. Getter or RESTConfig and Namespace are
// required; the rest have defaults.
type Options struct {
	// Getter gives access to the cluster. It takes precedence over
	// RESTConfig; use it to honour kubeconfig flags
	// (genericclioptions.ConfigFlags).
	Getter genericclioptions.RESTClientGetter
	// RESTConfig is used when Getter is nil.
	RESTConfig *rest.Config
	// Discovery and Mapper, with RESTConfig, are the process's shared
	// discovery cache and the REST mapper over it; invalidating Discovery
	// must reset Mapper too. Set both or neither: without them the Client
	// keeps a cache and mapper of its own. Helm maps the kinds of rendered
	// objects with Mapper, which should read discovery again when it misses
	// a kind (new CRDs), and reads the server's version and API versions
	// (.Capabilities) from Discovery.
	Discovery discovery.CachedDiscoveryInterface
	Mapper    meta.RESTMapper
	// DiscoveryMaxAge is how old the server's version and API versions may
	// be when an operation starts (default 10s); Helm would read them again
	// for every operation. The Client refreshes them at once after a
	// release created or deleted a CustomResourceDefinition or APIService.
	DiscoveryMaxAge time.Duration
	// Namespace is the operator's namespace: every release, its storage
	// records, and every rendered object without a namespace of its own live
	// there.
	Namespace string
	// Driver is Helm's release storage: "secret" (default) or "configmap".
	Driver string
	// HistoryMax is how many revisions are kept per release (default 10).
	HistoryMax int
	// Timeout bounds one Apply or Uninstall, including waiting for chart
	// hooks (default 20m, as in the established implementation); it is
	// also how long each chart hook is waited for, unless the Release's
	// HookTimeout says otherwise.
	Timeout time.Duration
	// AdoptObjects names the releases (modules) that take over existing
	// objects of no release which their charts render, as if each carried
	// objects.AnnotationAdopt. Objects of another release are never taken this way.
	AdoptObjects []string
	// AdoptUnlabeledReleases lets Apply upgrade, and so take over, a release
	// of a module's name that has no LabelManagedBy, and ClaimUnlabeled
	// label every such release in the namespace: the way to move from an
	// addon-operator that did not label its releases. Without it Apply
	// refuses such a release with a *ForeignReleaseError.
	AdoptUnlabeledReleases bool
	// Watched answers, from a watch of the operator's objects, whether an
	// object of a release exists: Apply's check that every object of an
	// up-to-date release exists then reads only those it does not know.
	// Nil reads every object.
	Watched objects.Watched
	// Records answers Owned from a watch of the release records' metadata,
	// without a request; nil lists their metadata for every Owned.
	Records ReleaseRecords
	// OnLocalAnswer is called for every read Helm makes that the Client
	// answers NotFound itself, without a request (an object the ownership
	// check has just found absent); nil ignores them.
	OnLocalAnswer func()
	// OnRepeatedRead is called for every read of an object that Helm
	// repeats within one install or upgrade and the Client answers from
	// the first, without a request (a successful GET, as the first one);
	// nil ignores them.
	OnRepeatedRead func()
	// Logger receives the package's logs and Helm's debug output, the latter
	// at debug level. Nil discards them.
	Logger *slog.Logger
}

// BindFlags binds the options that are operator settings; the cluster
// access, namespace and logger are wired by the caller.
func (o *Options) BindFlags(fs *pflag.FlagSet) {
	fs.IntVar(&o.HistoryMax, "helm-history-max", DefaultHistoryMax, "revisions kept per Helm release (env HELM_HISTORY_MAX)")
	fs.DurationVar(&o.Timeout, "helm-timeout", DefaultTimeout, "timeout of one Helm install, upgrade or uninstall, chart hooks included (env HELM_TIMEOUT)")
	fs.StringSliceVar(&o.AdoptObjects, flagAdoptObjects, nil, "modules whose releases take over existing objects that belong to no Helm release, as if each were annotated "+
		objects.AnnotationAdopt+"=true; objects of another release are never taken (env ADDON_OPERATOR_ADOPT_OBJECTS)")
	fs.BoolVar(&o.AdoptUnlabeledReleases, flagAdoptUnlabeledReleases, false, "take over, at startup, the Helm releases in the namespace that addon-operator did not label as its own (those of removed modules are then purged), "+
		"for the migration from an addon-operator that did not label its releases; without it they are never touched (env ADDON_OPERATOR_ADOPT_UNLABELED_RELEASES)")
	fs.StringVar(&o.Driver, "helm-driver", DefaultDriver, `Helm release storage: "secret" or "configmap" (env HELM_DRIVER)`)
}

// Validate reports every invalid field.
func (o *Options) Validate() error {
	var errs []error
	if o.Getter == nil && o.RESTConfig == nil {
		errs = append(errs, errors.New("no cluster access: set Getter or RESTConfig"))
	}
	if (o.Discovery == nil) != (o.Mapper == nil) {
		errs = append(errs, errors.New("set both Discovery and Mapper, or neither"))
	}
	if o.Namespace == "" {
		errs = append(errs, errors.New("namespace is empty"))
	}
	switch o.Driver {
	case "", "secret", "secrets", "configmap", "configmaps":
	default:
		errs = append(errs, fmt.Errorf("unknown helm driver %q", o.Driver))
	}
	for _, name := range o.AdoptObjects {
		if strings.TrimSpace(name) == "" {
			errs = append(errs, fmt.Errorf("--%s names an empty module", flagAdoptObjects))
		}
	}
	if o.HistoryMax < 0 {
		errs = append(errs, fmt.Errorf("helm history max %d is negative", o.HistoryMax))
	}
	if o.DiscoveryMaxAge < 0 {
		errs = append(errs, fmt.Errorf("discovery max age %s is negative", o.DiscoveryMaxAge))
	}
	if o.Timeout < 0 {
		errs = append(errs, fmt.Errorf("helm timeout %s is negative", o.Timeout))
	}
	return errors.Join(errs...)
}

// withDefaults returns o with zero fields set to their defaults.
func (o Options) withDefaults() Options {
	if o.Driver == "" {
		o.Driver = DefaultDriver
	}
	if o.HistoryMax == 0 {
		o.HistoryMax = DefaultHistoryMax
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.DiscoveryMaxAge == 0 {
		o.DiscoveryMaxAge = DefaultDiscoveryMaxAge
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}
