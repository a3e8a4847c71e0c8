package heal

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestHealWatcherUpdates(t *testing.T) {
	tests := []struct {
		name   string
		update func(w *Watcher) []Change
		want   []Change
	}{{
		name: "every update of a watched object, also while paused",
		update: func(w *Watcher) []Change {
			w.Pause("m1")
			got := w.updated(schema.GroupKind{Kind: "ConfigMap"}, true, "ops", "a")
			return append(got, w.updated(schema.GroupKind{Kind: "ConfigMap"}, true, "ops", "a")...)
		},
		want: []Change{
			{Module: "m1", Object: ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ops", Name: "a"}},
			{Module: "m1", Object: ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ops", Name: "a"}},
		},
	}, {
		name: "an object of the same name in another namespace",
		update: func(w *Watcher) []Change {
			return w.updated(schema.GroupKind{Kind: "Secret"}, true, "other", "s")
		},
	}, {
		name: "an object of another kind",
		update: func(w *Watcher) []Change {
			return w.updated(schema.GroupKind{Kind: "Secret"}, true, "ops", "a")
		},
	}, {
		name: "after Forget",
		update: func(w *Watcher) []Change {
			w.Forget("m1")
			return w.updated(schema.GroupKind{Kind: "ConfigMap"}, true, "ops", "a")
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := testWatcher(t, nil, nil)
			w.Watch("m1", testObjects())
			if diff := cmp.Diff(tt.want, tt.update(w)); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
		})
	}
}
