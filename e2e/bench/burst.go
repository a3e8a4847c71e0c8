package bench

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Burst is a stream of watch events and how the operator took it.
type Burst struct {
	// Rate and Duration are what was asked; Sent the updates made.
	Rate     int
	Duration time.Duration
	Sent     int
	// MaxQueue is the largest addon_operator_queue_length of any queue
	// seen, sampled every second.
	MaxQueue int
	// HeapBefore and HeapAfter are the live heap before the burst and once
	// its last update reached the module's values.
	HeapBefore, HeapAfter int64
	// Settle is from the end of the burst until its last update reached
	// the module's values.
	Settle time.Duration
}

// burstObjects are the objects the burst updates, round robin.
const (
	burstObjects = 100
	burstWorkers = 8
)

// eventBurst updates ConfigMaps that key's kubernetes hook watches at rate
// per second for d, then waits until the module's rendered ConfigMap
// shows the last value written.
func (s *session) eventBurst(ctx context.Context, key string, rate int, d time.Duration) (Burst, error) {
	b := Burst{Rate: rate, Duration: d}
	cms := s.client.CoreV1().ConfigMaps(s.ns)
	for i := range burstObjects {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "burst-" + strconv.Itoa(i), Labels: map[string]string{WatchLabel: key}},
			Data:       map[string]string{"value": "b0-" + strconv.Itoa(i)},
		}
		if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			return b, fmt.Errorf("create burst ConfigMap: %w", err)
		}
	}
	var err error
	if b.HeapBefore, err = s.liveHeap(ctx); err != nil {
		return b, err
	}
	var maxQueue atomic.Int64
	bctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { s.sampleQueues(bctx, &maxQueue) })
	work := make(chan int64)
	for range burstWorkers {
		wg.Go(func() {
			for n := range work {
				name := "burst-" + strconv.FormatInt(n%burstObjects, 10)
				patch := []byte(`{"data":{"value":"b` + strconv.FormatInt(n, 10) + `"}}`)
				_, _ = cms.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}) // Sent counts what was asked
			}
		})
	}
	tick := time.NewTicker(time.Second / time.Duration(rate))
	var n int64
loop:
	for {
		select {
		case <-bctx.Done():
			break loop
		case <-tick.C:
			select {
			case work <- n + 1: // a busy pool drops the tick: Sent tells
				n++
			default:
			}
		}
	}
	tick.Stop()
	close(work)
	wg.Wait()
	b.Sent, b.MaxQueue = int(n), int(maxQueue.Load())
	// One last update after all others: the burst is absorbed when the
	// module's values show it.
	end := time.Now()
	last := "bfinal"
	if _, err := cms.Patch(ctx, "burst-0", types.MergePatchType, []byte(`{"data":{"value":"`+last+`"}}`), metav1.PatchOptions{}); err != nil {
		return b, fmt.Errorf("last burst update: %w", err)
	}
	wctx, wcancel := context.WithTimeout(ctx, convergeTimeout)
	defer wcancel()
	poll := time.NewTicker(referencePoll)
	defer poll.Stop()
	for {
		cm, err := cms.Get(wctx, key, metav1.GetOptions{})
		if err == nil && hasWord(cm.Data[KeyWatched], last) {
			break
		}
		select {
		case <-wctx.Done():
			return b, fmt.Errorf("wait for the burst's last update in module %s: %w", key, wctx.Err())
		case <-poll.C:
		}
	}
	b.Settle = time.Since(end)
	b.HeapAfter, err = s.liveHeap(ctx)
	return b, err
}

// sampleQueues records the longest queue seen, every second, until ctx
// ends.
func (s *session) sampleQueues(ctx context.Context, longest *atomic.Int64) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		if n, err := s.queueLength(ctx); err == nil && int64(n) > longest.Load() {
			longest.Store(int64(n))
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// queueLength is the longest addon_operator_queue_length now.
func (s *session) queueLength(ctx context.Context) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.metrics.url, http.NoBody)
	if err != nil {
		return 0, fmt.Errorf("scrape queues: %w", err)
	}
	resp, err := s.metrics.client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("scrape queues: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return 0, fmt.Errorf("scrape queues: %w", err)
	}
	longest := 0
	for _, m := range families["addon_operator_queue_length"].GetMetric() {
		longest = max(longest, int(math.Round(m.GetGauge().GetValue())))
	}
	return longest, nil
}
