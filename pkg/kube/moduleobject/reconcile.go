package moduleobject

import (
	"log/slog"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	v1 "github.com/addon-operator/addon-operator/pkg/apis/v1alpha1"
	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// maxReconcileValue bounds the reconcile annotation's value the Writer
// takes: status.lastHandledReconcileAt copies it into every later status.
const maxReconcileValue = 256

// reconcileRequests are the reconcile requests the Writer passed on.
type reconcileRequests struct {
	on    func(module, value string) // nil: nobody listens
	mu    sync.Mutex
	heard map[string]string // module -> the last value passed on
}

// OnReconcileRequest makes f hear a module's name and the value of its
// object's v1.ReconcileRequestAnnotation each time the watch sees a value
// that is new: not the one status.lastHandledReconcileAt holds, nor the
// last one f heard for the module. Values longer than 256 bytes are
// ignored (and logged). Call it before Run; f must not block.
func (w *Writer) OnReconcileRequest(f func(module, value string)) {
	w.reconcile.on = f
}

// noticeReconcile passes a new reconcile request of obj on; it is called
// by the watch for every added or updated object.
func (w *Writer) noticeReconcile(obj any) {
	r := &w.reconcile
	u, ok := obj.(*unstructured.Unstructured)
	if r.on == nil || !ok {
		return
	}
	value := u.GetAnnotations()[v1.ReconcileRequestAnnotation]
	handled, _, _ := unstructured.NestedString(u.Object, "status", "lastHandledReconcileAt")
	if value == "" || value == handled {
		return
	}
	name := u.GetName()
	r.mu.Lock()
	if r.heard == nil {
		r.heard = map[string]string{}
	}
	if r.heard[name] == value {
		r.mu.Unlock()
		return
	}
	r.heard[name] = value
	r.mu.Unlock()
	if len(value) > maxReconcileValue {
		w.opts.Logger.Warn("reconcile request ignored: the annotation's value is longer than 256 bytes",
			slog.String(logkey.Module, name), slog.Int(logkey.Count, len(value)))
		return
	}
	w.opts.Logger.Info("reconcile requested on the module's object: running it now", slog.String(logkey.Module, name))
	r.on(name, value)
}

// reconcileHandler is the watch's handler of reconcile requests.
func (w *Writer) reconcileHandler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    w.noticeReconcile,
		UpdateFunc: func(_, obj any) { w.noticeReconcile(obj) },
	}
}
