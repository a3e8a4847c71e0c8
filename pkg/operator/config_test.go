package operator

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/addon-operator/addon-operator/pkg/config"
)

// TestConfigQueueKeepsOnlyTheLatestContent: configurations the watch hands
// over while the main queue is busy replace one another at its head.
func TestConfigQueueKeepsOnlyTheLatestContent(t *testing.T) {
	o, _ := newTestOperator(t, &fakeRunner{})
	// Three changes arrive while the main queue is busy with a converge.
	o.main.PushBack(convergeTask{})
	q := configQueue{o.main}
	for _, v := range []string{"1", "2", "3"} {
		c, err := config.Parse(map[string]string{"global": "v: " + v})
		if err != nil {
			t.Fatal(err)
		}
		q.Apply(c)
	}
	items := o.main.Snapshot().Items
	got := make([]string, 0, len(items))
	for _, it := range items {
		desc := it.Task.String()
		if apply, ok := it.Task.(applyConfigTask); ok {
			desc += fmt.Sprintf(" v=%v", apply.config.Global["v"])
		}
		got = append(got, desc)
	}
	if diff := cmp.Diff([]string{"ApplyConfig v=3", "Converge"}, got); diff != "" {
		t.Errorf("main queue (-want +got):\n%s", diff)
	}
}
