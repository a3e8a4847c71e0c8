package heal

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

func TestMayDrift(t *testing.T) {
	slim := func(rv string, generation int64, labels map[string]string) metav1.Object {
		s, err := driftSlim(&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
			Name: "a", ResourceVersion: rv, Generation: generation, Labels: labels, Annotations: map[string]string{"note": "x"},
		}})
		if err != nil {
			t.Fatal(err)
		}
		return s.(*metav1.PartialObjectMetadata)
	}
	tests := []struct {
		name          string
		before, after metav1.Object
		want          bool
	}{
		{"a relist", slim("1", 1, nil), slim("1", 1, nil), false},
		{"a status update", slim("1", 3, map[string]string{"a": "b"}), slim("2", 3, map[string]string{"a": "b"}), false},
		{"a spec update", slim("1", 3, nil), slim("2", 4, nil), true},
		{"a label edit", slim("1", 3, map[string]string{"a": "b"}), slim("2", 3, map[string]string{"a": "c"}), true},
		{"a kind without generations", slim("1", 0, nil), slim("2", 0, nil), true},
	}
	for _, tt := range tests {
		if got := mayDrift(tt.before, tt.after); got != tt.want {
			t.Errorf("%s: mayDrift = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestDriftSlimIsIdempotent(t *testing.T) {
	obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "a", ResourceVersion: "1", Generation: 2, Labels: map[string]string{"a": "b"}}}
	once, _ := driftSlim(obj)
	twice, _ := driftSlim(once)
	if diff := cmp.Diff(once, twice); diff != "" {
		t.Errorf("slimmed twice (-once +twice):\n%s", diff)
	}
}
