package moduleobject

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	v1 "github.com/addon-operator/addon-operator/pkg/apis/v1alpha1"
)

// TestNoticeReconcile: a new annotation value is passed on once; the
// value the status says was handled, an empty one, a repeat and an
// oversized one are not.
func TestNoticeReconcile(t *testing.T) {
	w := &Writer{opts: Options{Logger: slog.New(slog.DiscardHandler)}}
	var heard []string
	w.OnReconcileRequest(func(m, v string) { heard = append(heard, m+"="+v) })
	obj := func(name, value, handled string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		u.SetName(name)
		if value != "" {
			u.SetAnnotations(map[string]string{v1.ReconcileRequestAnnotation: value})
		}
		if handled != "" {
			u.Object["status"] = map[string]any{"lastHandledReconcileAt": handled}
		}
		return u
	}
	for _, o := range []*unstructured.Unstructured{
		obj("a", "", ""),     // none
		obj("a", "t1", "t1"), // handled before this process started
		obj("a", "t2", "t1"), // new
		obj("a", "t2", "t1"), // the same again (a status write's event)
		obj("b", "t2", ""),   // another module's
		obj("a", "t3", "t2"), // newer
		obj("a", strings.Repeat("x", 257), "t3"),
	} {
		w.noticeReconcile(o)
	}
	if diff := cmp.Diff([]string{"a=t2", "b=t2", "a=t3"}, heard); diff != "" {
		t.Errorf("requests heard (-want +got):\n%s", diff)
	}
}
