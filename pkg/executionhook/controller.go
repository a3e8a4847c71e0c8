// Package executionhook is the ExecutionHook controller of the
// execution-hooks module: it watches ExecutionHook objects and runs their
// PreAction in the selected containers when a hook appears and their
// PostAction when it is deleted or expires, through the pods/exec
// subresource, keeping the outcome in the hook's status, in Events and in
// metrics. An action runs only in pods where the hook's recorded requester
// may create pods/exec, never in the operator's namespace. It depends on
// client-go and the module's API types only.
package executionhook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	hooksv1 "github.com/addon-operator/addon-operator/pkg/apis/hooks/v1alpha1"
	"github.com/addon-operator/addon-operator/pkg/kube"
	"github.com/addon-operator/addon-operator/pkg/logkey"
	"github.com/addon-operator/addon-operator/pkg/queue"
)

// Options configure the controller.
type Options struct {
	// Namespaces the controller acts in; empty means all.
	Namespaces []string
	// OperatorNamespace is where the operator and the controller run:
	// hooks there never run, and its ServiceAccounts' rights are never
	// lent to a hook.
	OperatorNamespace string
	// MetricsAddress is where /metrics and /healthz are served; empty
	// serves nothing.
	MetricsAddress string
	// DefaultActionTimeout bounds an action whose actionTimeoutSeconds is
	// unset.
	DefaultActionTimeout time.Duration
	// Workers is how many hooks are reconciled at once.
	Workers int
	// Resync is how often every hook is reconciled again besides the watch.
	Resync time.Duration
}

// BindFlags adds the options' flags to fs.
func (o *Options) BindFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&o.Namespaces, "namespaces", nil, "Namespaces whose ExecutionHooks the controller runs, comma-separated; empty means all")
	fs.StringVar(&o.OperatorNamespace, "operator-namespace", "", "The operator's namespace (the module's): ExecutionHooks there never run and its ServiceAccounts never lend their rights to one (env ADDON_OPERATOR_NAMESPACE); required")
	fs.StringVar(&o.MetricsAddress, "metrics-address", ":9680", "Address of the /metrics and /healthz listener; empty disables it")
	fs.DurationVar(&o.DefaultActionTimeout, "default-action-timeout", 30*time.Second, "Timeout of an action without actionTimeoutSeconds")
	fs.IntVar(&o.Workers, "workers", 4, "How many ExecutionHooks are reconciled at once")
	fs.DurationVar(&o.Resync, "resync", 5*time.Minute, "How often every ExecutionHook is reconciled again besides the watch")
}

// Validate reports the first invalid option.
func (o *Options) Validate() error {
	switch {
	case o.OperatorNamespace == "":
		return errors.New("the operator's namespace is required: -n/--namespace or ADDON_OPERATOR_NAMESPACE")
	case o.DefaultActionTimeout <= 0:
		return fmt.Errorf("--default-action-timeout must be positive, got %s", o.DefaultActionTimeout)
	case o.Workers < 1:
		return fmt.Errorf("--workers must be at least 1, got %d", o.Workers)
	case o.Resync <= 0:
		return fmt.Errorf("--resync must be positive, got %s", o.Resync)
	}
	return nil
}

// Executor runs a command in a container and waits for it until ctx ends,
// writing its stdout and stderr to output (nil: discarded); a non-zero
// exit is an *ExitError, a failure before the command could start wraps
// ErrNotStarted.
type Executor interface {
	Exec(ctx context.Context, namespace, pod, container string, command []string, output io.Writer) error
}

// Controller reconciles ExecutionHooks. Its queue guarantees that one hook
// is reconciled by one worker at a time, which is what makes the
// timestamp-before-exec rule enough to never start an action twice.
type Controller struct {
	opts    Options
	dyn     dynamic.Interface
	client  kubernetes.Interface
	exec    Executor
	access  Authorizer
	events  record.EventRecorder
	metrics *Metrics
	log     *slog.Logger
	clock   clock.Clock
	queue   workqueue.TypedRateLimitingInterface[string]
}

// Params are what New needs besides the options.
type Params struct {
	Dynamic dynamic.Interface
	Client  kubernetes.Interface
	Exec    Executor
	Access  Authorizer
	Events  record.EventRecorder
	Metrics *Metrics
	Log     *slog.Logger
	Clock   clock.WithTicker
}

// New returns a Controller; Run starts it.
func New(opts Options, p Params) *Controller {
	return &Controller{
		opts: opts, dyn: p.Dynamic, client: p.Client, exec: p.Exec, access: p.Access, events: p.Events,
		metrics: p.Metrics, log: p.Log, clock: p.Clock,
		queue: queue.NewWorkQueue("executionhooks", p.Clock,
			queue.BackoffLimiter[string](queue.ExponentialBackoff(500*time.Millisecond, time.Minute)), nil),
	}
}

// Run watches the hooks and reconciles them until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	g, ctx := errgroup.WithContext(ctx)
	if c.opts.MetricsAddress != "" {
		if err := c.serveMetrics(ctx, g); err != nil {
			return err
		}
	}
	namespaces := c.opts.Namespaces
	if len(namespaces) == 0 {
		namespaces = []string{""}
	}
	for _, ns := range namespaces {
		// The reconcile reads each hook afresh, so the watch only says
		// which to look at; every Resync all are looked at again.
		g.Go(func() error {
			return kube.WatchKeys(ctx, c.dyn, hooksv1.ExecutionHooksGVR(), ns, c.opts.Resync, c.queue.Add)
		})
	}
	for range c.opts.Workers {
		g.Go(func() error {
			for c.processNext(ctx) {
			}
			return nil
		})
	}
	g.Go(func() error {
		<-ctx.Done()
		c.queue.ShutDown()
		return nil
	})
	c.log.InfoContext(ctx, "execution hook controller started", slog.Int(logkey.Count, len(c.opts.Namespaces)))
	return g.Wait()
}

// processNext reconciles one hook from the queue; false once the queue is
// shut down.
func (c *Controller) processNext(ctx context.Context) bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(key)
	c.metrics.hooks.Inc()
	after, err := c.reconcile(ctx, key)
	c.metrics.hooks.Dec()
	switch {
	case queue.IsTerminal(err):
		c.log.ErrorContext(ctx, "reconcile execution hook, will not retry", slog.String(logkey.Name, key), logkey.Err(err))
		c.queue.Forget(key)
	case errors.Is(err, errWaiting):
		c.log.DebugContext(ctx, "execution hook waits, will look again", slog.String(logkey.Name, key), logkey.Err(err))
		c.queue.AddRateLimited(key)
	case err != nil && ctx.Err() == nil:
		c.log.ErrorContext(ctx, "reconcile execution hook, will retry", slog.String(logkey.Name, key), logkey.Err(err))
		c.queue.AddRateLimited(key)
	case after > 0:
		c.queue.Forget(key)
		c.queue.AddAfter(key, after)
	default:
		c.queue.Forget(key)
	}
	return true
}

func (c *Controller) serveMetrics(ctx context.Context, g *errgroup.Group) error {
	mux := http.NewServeMux()
	mux.Handle("/metrics", c.metrics.Handler())
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	l, err := new(net.ListenConfig).Listen(ctx, "tcp", c.opts.MetricsAddress)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", c.opts.MetricsAddress, err)
	}
	c.log.InfoContext(ctx, "metrics listening", slog.String(logkey.Name, l.Addr().String()))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	g.Go(func() error {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("serve metrics: %w", err)
		}
		return nil
	})
	g.Go(func() error {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		return srv.Shutdown(shutdown)
	})
	return nil
}

// EventSource names the controller in the Events it records.
func EventSource() corev1.EventSource {
	return corev1.EventSource{Component: "execution-hook-controller"}
}
