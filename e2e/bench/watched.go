package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Watched is the operator's heap with many watched objects.
type Watched struct {
	Objects int
	// HeapBefore and HeapAfter are the live heap (go_memstats_heap_alloc_bytes
	// right after a forced GC) before the objects were created and once the
	// module's values list all of them.
	HeapBefore, HeapAfter int64
	// Wall is from the first create until the module's rendered
	// ConfigMap lists the last object.
	Wall time.Duration
}

// watchedCreators create the objects in parallel.
const watchedCreators = 8

// watchedObjects creates count ConfigMaps that key's kubernetes hook
// watches, waits until the module's rendered ConfigMap lists the last
// one, and reads the operator's live heap before and after.
func (s *session) watchedObjects(ctx context.Context, key string, count int) (Watched, error) {
	return measureWatched(ctx, s.client, s.ns, key, count, s.liveHeap)
}

// measureWatched creates count ConfigMaps in ns that key's kubernetes hook
// watches, waits until the module's rendered ConfigMap lists the last
// one, and reads the live heap with heap before and after.
func measureWatched(ctx context.Context, client kubernetes.Interface, ns, key string, count int, heap func(context.Context) (int64, error)) (Watched, error) {
	w := Watched{Objects: count}
	var err error
	if w.HeapBefore, err = heap(ctx); err != nil {
		return w, err
	}
	start := time.Now()
	if err := createWatched(ctx, client, ns, key, count); err != nil {
		return w, err
	}
	last := "w" + strconv.Itoa(count-1)
	wctx, cancel := context.WithTimeout(ctx, convergeTimeout)
	defer cancel()
	tick := time.NewTicker(referencePoll)
	defer tick.Stop()
	for {
		cm, err := client.CoreV1().ConfigMaps(ns).Get(wctx, key, metav1.GetOptions{})
		if err == nil && hasWord(cm.Data[KeyWatched], last) {
			break
		}
		select {
		case <-wctx.Done():
			return w, fmt.Errorf("wait for %d watched objects in module %s: %w", count, key, wctx.Err())
		case <-tick.C:
		}
	}
	w.Wall = time.Since(start)
	w.HeapAfter, err = heap(ctx)
	return w, err
}

func hasWord(s, word string) bool {
	for f := range strings.FieldsSeq(s) {
		if f == word {
			return true
		}
	}
	return false
}

// createWatched creates ConfigMaps w0..w<count-1> in ns labelled for key.
func createWatched(ctx context.Context, client kubernetes.Interface, ns, key string, count int) error {
	next := make(chan int)
	errs := make([]error, watchedCreators)
	var wg sync.WaitGroup
	for c := range watchedCreators {
		wg.Go(func() {
			for i := range next {
				cm := &corev1.ConfigMap{
					ObjectMeta: metav1.ObjectMeta{Name: "watched-many-" + strconv.Itoa(i), Labels: map[string]string{WatchLabel: key}},
					Data:       map[string]string{"value": "w" + strconv.Itoa(i)},
				}
				if _, err := client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil && errs[c] == nil {
					errs[c] = fmt.Errorf("create watched ConfigMap %d: %w", i, err)
				}
			}
		})
	}
	for i := range count {
		select {
		case next <- i:
		case <-ctx.Done():
			close(next)
			wg.Wait()
			return ctx.Err()
		}
	}
	close(next)
	wg.Wait()
	return errors.Join(errs...)
}

// referenceHeap forces a GC in the reference (its pprof heap profile with
// gc=1, which its HTTP server serves at /debug/pprof) and reads
// go_memstats_heap_alloc_bytes from its /metrics, as liveHeap does for ours.
func referenceHeap(base string) func(context.Context) (int64, error) {
	client := &http.Client{Timeout: scrapeTimeout}
	return func(ctx context.Context) (int64, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/debug/pprof/heap?gc=1", http.NoBody)
		if err != nil {
			return 0, fmt.Errorf("reference heap profile: %w", err)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, fmt.Errorf("reference heap profile: %w", err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return 0, fmt.Errorf("reference heap profile: status %d", resp.StatusCode)
		}
		return scrapeHeap(ctx, client, base+"/metrics")
	}
}

// liveHeap forces a GC in the operator (its heap profile with gc=1, over
// the debug socket) and reads go_memstats_heap_alloc_bytes.
func (s *session) liveHeap(ctx context.Context) (int64, error) {
	client := &http.Client{Timeout: scrapeTimeout, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", s.op.Socket)
		},
	}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://operator/debug/pprof/heap?gc=1", http.NoBody)
	if err != nil {
		return 0, fmt.Errorf("heap profile: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("heap profile: %w", err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("heap profile: status %d", resp.StatusCode)
	}
	return scrapeHeap(ctx, s.metrics.client, s.metrics.url)
}

// scrapeHeap reads go_memstats_heap_alloc_bytes from the metrics at url.
func scrapeHeap(ctx context.Context, client *http.Client, url string) (int64, error) {
	mreq, err := http.NewRequestWithContext(ctx, http.MethodGet, url, http.NoBody)
	if err != nil {
		return 0, fmt.Errorf("scrape heap: %w", err)
	}
	mresp, err := client.Do(mreq)
	if err != nil {
		return 0, fmt.Errorf("scrape heap: %w", err)
	}
	defer func() { _ = mresp.Body.Close() }()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(mresp.Body)
	if err != nil {
		return 0, fmt.Errorf("scrape heap: %w", err)
	}
	for _, m := range families["go_memstats_heap_alloc_bytes"].GetMetric() {
		return int64(math.Round(m.GetGauge().GetValue())), nil
	}
	return 0, errors.New("scrape heap: no go_memstats_heap_alloc_bytes")
}
