package config

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// Event is the state of the ConfigMap at one moment: either a parsed Config
// or the error that made it invalid.
type Event struct {
	// Config is the parsed ConfigMap; empty when the ConfigMap is absent;
	// nil exactly when Err is set.
	Config *Config
	// Err explains why the ConfigMap is invalid; it matches ErrInvalid and
	// wraps one *KeyError per wrong key. Keep the last good Config.
	Err error
	// ResourceVersion is the ConfigMap's resourceVersion; empty when the
	// ConfigMap is absent.
	ResourceVersion string
	// Absent is true when the ConfigMap does not exist (never created, or
	// deleted). Config is then empty; whether that empty Config is applied
	// is the receiver's decision (see DecideHold). With ModuleConfig
	// objects it means that none exists.
	Absent bool
	// Confirmed is true when the source carries ConfirmEmptyAnnotation
	// "true": an empty Config is meant, even while a configuration is in
	// force.
	Confirmed bool
	// ModuleConfigs is true when the event comes from ModuleConfig
	// objects rather than the ConfigMap.
	ModuleConfigs bool
}

// Source reads, watches and writes one ConfigMap. Its fields are set by
// NewSource and never change, so its methods may run concurrently.
type Source struct {
	client    kubernetes.Interface
	namespace string
	name      string
	events    chan Event
	log       *slog.Logger
}

// NewSource returns a Source for the ConfigMap name (DefaultName when empty)
// in namespace. A nil log discards logs.
func NewSource(client kubernetes.Interface, namespace, name string, log *slog.Logger) *Source {
	if name == "" {
		name = DefaultName
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Source{client: client, namespace: namespace, name: name, events: make(chan Event), log: log}
}

// Events is the channel Run sends its events on. The Source makes it and
// alone sends on it; it is unbuffered, so Run waits for its receiver.
func (s *Source) Events() <-chan Event { return s.events }

// Run watches the ConfigMap with an informer restricted to its name, until
// ctx is done; then it returns nil. The first event is sent once the
// informer has synced, whether or not the ConfigMap exists, so the caller
// learns the initial config. After that an event is sent whenever the
// ConfigMap is created, updated (its resourceVersion changes) or deleted
// (an empty Config).
//
// Events are level-triggered: each carries the whole current state, and
// changes that arrive while the receiver is busy are coalesced into the
// latest one. Run blocks on a slow receiver, never the informer. Until the
// first list succeeds (the API is unreachable, RBAC forbids it) no event is
// sent; client-go logs the retries through klog. Run returns an error only
// when it cannot start. Call it once per Source.
func (s *Source) Run(ctx context.Context) error {
	informer := cache.NewSharedIndexInformer(s.listWatch(), &corev1.ConfigMap{}, 0, cache.Indexers{})
	dirty := make(chan struct{}, 1)
	notify := func() {
		select {
		case dirty <- struct{}{}:
		default: // a wakeup is already pending; it will read the latest state
		}
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { notify() },
		UpdateFunc: func(_, _ any) { notify() },
		DeleteFunc: func(any) { notify() },
	}); err != nil {
		return fmt.Errorf("watch configmap %s/%s: %w", s.namespace, s.name, err)
	}

	informerCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { informer.RunWithContext(informerCtx) })
	defer func() { stop(); wg.Wait() }()

	start := time.Now()
	// The informer's own done channel, not WaitForCacheSync, which polls
	// every 100 ms: that poll was a tenth of a second of every start.
	select {
	case <-informer.HasSyncedChecker().Done():
	case <-ctx.Done():
		return nil // ctx is done
	}
	s.log.Debug("config watch synced", slog.String(logkey.Namespace, s.namespace), slog.String(logkey.Name, s.name),
		slog.Duration(logkey.Duration, time.Since(start)))
	return s.deliver(ctx, informer.GetStore(), dirty)
}

// deliver sends the current state now and after every wakeup on dirty whose
// state has a resourceVersion other than the last one sent.
func (s *Source) deliver(ctx context.Context, store cache.Store, dirty <-chan struct{}) error {
	key := s.namespace + "/" + s.name
	first, last := true, ""
	for {
		obj, _, err := store.GetByKey(key)
		if err != nil {
			return fmt.Errorf("read configmap %s from cache: %w", key, err)
		}
		cm, _ := obj.(*corev1.ConfigMap)
		if ev := s.event(cm); first || ev.ResourceVersion != last {
			select {
			case s.events <- ev:
			case <-ctx.Done():
				return nil
			}
			first, last = false, ev.ResourceVersion
		}
		select {
		case <-dirty:
		case <-ctx.Done():
			return nil
		}
	}
}

// event parses cm; a nil cm is an absent ConfigMap.
func (s *Source) event(cm *corev1.ConfigMap) Event {
	if cm == nil {
		c, _ := Parse(nil) // cannot fail
		return Event{Config: c, Absent: true}
	}
	c, err := Parse(cm.Data)
	if err != nil {
		err = fmt.Errorf("configmap %s/%s: %w", s.namespace, s.name, err)
	}
	return Event{Config: c, Err: err, ResourceVersion: cm.ResourceVersion,
		Confirmed: cm.Annotations[ConfirmEmptyAnnotation] == "true"}
}

// listWatch lists and watches only the one ConfigMap, by field selector.
func (s *Source) listWatch() cache.ListerWatcher {
	selector := fields.OneTermEqualSelector(metav1.ObjectNameField, s.name).String()
	configMaps := s.client.CoreV1().ConfigMaps(s.namespace)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			opts.FieldSelector = selector
			return configMaps.List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.FieldSelector = selector
			return configMaps.Watch(ctx, opts)
		},
	}
	// Lets fake clientsets, which cannot stream lists, opt out of WatchList.
	return cache.ToListWatcherWithWatchListSemantics(lw, s.client)
}

// Load reads the ConfigMap once. An absent ConfigMap yields an empty
// Config. An invalid one yields an error matching ErrInvalid (with one
// *KeyError per wrong key); any other error comes from the API.
func (s *Source) Load(ctx context.Context) (*Config, error) {
	cm, err := s.client.CoreV1().ConfigMaps(s.namespace).Get(ctx, s.name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		cm = nil
	case err != nil:
		return nil, fmt.Errorf("get configmap %s/%s: %w", s.namespace, s.name, err)
	}
	ev := s.event(cm)
	return ev.Config, ev.Err
}
