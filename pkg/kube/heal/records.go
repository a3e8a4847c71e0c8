package heal

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"

	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// Labels of Helm's storage records (secret and configmap drivers).
const (
	recordOwnerSelector = "owner=helm"
	recordNameLabel     = "name"
	recordVersionLabel  = "version"
	recordStatusLabel   = "status"
)

// RecordWatcherOptions are the dependencies of a RecordWatcher.
type RecordWatcherOptions struct {
	// Metadata lists and watches the records' metadata.
	Metadata metadata.Interface
	// Driver is Helm's storage driver: "secret" (or "secrets") or
	// "configmap" (or "configmaps").
	Driver string
	// Namespace holds the releases' records.
	Namespace string
	// Events receives a Event per release whose newest record was
	// deleted: Module is the release name, Object the record.
	Events chan<- Event
	// Log receives watch failures; nil discards them.
	Log *slog.Logger
	// Labels are the release's own labels that the watcher keeps of each
	// record for RecordLabels, besides Helm's name, version and status.
	Labels []string
}

// RecordWatcher reports deleted Helm release records: Helm keeps a
// release's history in one Secret (or ConfigMap) per revision, labelled
// owner=helm, name=<release>, version=<revision>. When the newest record of
// a release is deleted, its history is lost: the watcher sends one
// Event for it. Older records (which Helm prunes) are not reported,
// also when deleted together with the newest (a delete of all of them
// reports once); a new record of the release re-arms it. Uninstalls delete
// records too: the receiver decides whether the release should exist.
// Deletions while the release is paused (the operator's own Helm
// operations, which prune history) are not reported either. Events are
// handled in the order the informer delivers them, which is the order of
// the changes; its store may already be ahead and is not consulted. Run
// owns the informer; newest and paused are guarded by mu.
type RecordWatcher struct {
	metadata  metadata.Interface
	resource  schema.GroupVersionResource
	kind      string
	namespace string
	events    chan<- Event
	log       *slog.Logger
	// keep are the labels the informer's store keeps of each record.
	keep []string
	// store is the informer's store, set by Run before synced is closed.
	store cache.Store

	mu sync.Mutex
	// newest is the highest revision per release whose record was added
	// and not reported deleted since.
	newest map[string]int
	// paused counts Pause calls not yet matched by Resume, per release.
	paused map[string]int
	// synced is closed once the informer has listed the records.
	synced chan struct{}
}

// WaitSynced waits until Run has listed the records, so that a deletion
// from then on is seen, or ctx ends.
func (w *RecordWatcher) WaitSynced(ctx context.Context) error {
	select {
	case <-w.synced:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Pause suppresses reports for release rel until the matching Resume;
// pauses nest.
func (w *RecordWatcher) Pause(rel string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.paused[rel]++
}

// Resume ends one Pause of release rel. Extra calls are ignored.
func (w *RecordWatcher) Resume(rel string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.paused[rel] > 0 {
		w.paused[rel]--
	}
	if w.paused[rel] == 0 {
		delete(w.paused, rel)
	}
}

// Forget drops release rel's pauses, as Watcher.Forget does.
func (w *RecordWatcher) Forget(rel string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.paused, rel)
}

// NewRecordWatcher returns a watcher that watches nothing until Run.
func NewRecordWatcher(opts RecordWatcherOptions) (*RecordWatcher, error) {
	if opts.Metadata == nil || opts.Events == nil || opts.Namespace == "" {
		return nil, errors.New("record watcher needs a metadata client, an events channel and a namespace")
	}
	w := &RecordWatcher{metadata: opts.Metadata, namespace: opts.Namespace, events: opts.Events, log: opts.Log, newest: map[string]int{}, paused: map[string]int{}, synced: make(chan struct{})}
	w.keep = append([]string{recordNameLabel, recordVersionLabel, recordStatusLabel}, opts.Labels...)
	switch opts.Driver {
	case "", "secret", "secrets":
		w.resource, w.kind = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, "Secret"
	case "configmap", "configmaps":
		w.resource, w.kind = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "ConfigMap"
	default:
		return nil, errors.New("record watcher: unknown helm driver " + strconv.Quote(opts.Driver))
	}
	if w.log == nil {
		w.log = slog.New(slog.DiscardHandler)
	}
	return w, nil
}

// Run watches the records until ctx ends, then returns nil. Call it once.
func (w *RecordWatcher) Run(ctx context.Context) error {
	selectRecords := func(o *metav1.ListOptions) { o.LabelSelector = recordOwnerSelector }
	inf := metadatainformer.NewFilteredMetadataInformer(w.metadata, w.resource, w.namespace, 0, cache.Indexers{}, selectRecords).Informer()
	// Neither setter fails on an informer that has not started.
	_ = inf.SetTransform(func(obj any) (any, error) { return slimMetadata(obj, w.keep...) })
	w.store = inf.GetStore()
	_ = inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
		w.log.Warn("watch failed", slog.String(logkey.Kind, w.kind), slog.String(logkey.Namespace, w.namespace), logkey.Err(err))
	})
	reg, _ := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if rel, version, ok := recordOf(obj); ok {
				w.added(rel, version)
			}
		},
		DeleteFunc: func(obj any) { w.onDelete(ctx, obj) },
	})
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		select {
		case <-reg.HasSyncedChecker().Done():
			close(w.synced)
		case <-ctx.Done():
		}
	})
	inf.RunWithContext(ctx)
	return nil
}

// added notes a record of release rel at version.
func (w *RecordWatcher) added(rel string, version int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.newest[rel] = max(w.newest[rel], version)
}

// deleted reports whether the deletion of release rel's record at version
// is to be reported: it is the newest, and rel is not paused. Either way a
// deleted newest record disarms rel until a record is added.
func (w *RecordWatcher) deleted(rel string, version int) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if newest, ok := w.newest[rel]; !ok || newest != version {
		return false
	}
	delete(w.newest, rel)
	return w.paused[rel] == 0
}

func (w *RecordWatcher) onDelete(ctx context.Context, obj any) {
	if gone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = gone.Obj
	}
	rel, version, ok := recordOf(obj)
	if !ok || !w.deleted(rel, version) {
		return
	}
	m, _ := meta.Accessor(obj) // recordOf succeeded
	ev := Event{Module: rel, Object: ObjectRef{APIVersion: "v1", Kind: w.kind, Namespace: m.GetNamespace(), Name: m.GetName()}}
	select {
	case w.events <- ev:
	case <-ctx.Done():
	}
}

// recordOf returns the release and revision a record's labels name.
func recordOf(obj any) (rel string, version int, ok bool) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", 0, false
	}
	labels := m.GetLabels()
	version, err = strconv.Atoi(labels[recordVersionLabel])
	if err != nil || labels[recordNameLabel] == "" {
		return "", 0, false
	}
	return labels[recordNameLabel], version, true
}
