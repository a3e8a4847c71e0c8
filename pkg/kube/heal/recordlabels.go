package heal

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
)

// RecordLabels returns the labels of every release record in the
// namespace as the watch last saw them, once Run has listed the records
// (it waits for that, or for ctx to end). Each record's map holds its name,
// version and status labels and RecordWatcherOptions.Labels, a label it
// lacks being ""; the maps are the watch's own: read them, never write them.
// It makes no request. The answer lags the API server by the watch's
// latency.
func (w *RecordWatcher) RecordLabels(ctx context.Context) ([]map[string]string, error) {
	if err := w.WaitSynced(ctx); err != nil {
		return nil, fmt.Errorf("wait for the release records' watch: %w", err)
	}
	objs := w.store.List()
	labels := make([]map[string]string, 0, len(objs))
	for _, obj := range objs {
		if m, err := meta.Accessor(obj); err == nil {
			labels = append(labels, m.GetLabels())
		}
	}
	return labels, nil
}
