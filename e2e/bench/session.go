package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// ConfigMapName is the operator's ConfigMap; the operator's default.
const ConfigMapName = "addon-operator"

// Timeouts of the waits; generous, since the machine may be busy.
const (
	convergeTimeout = 15 * time.Minute
	reactionTimeout = 2 * time.Minute
	runDoneTimeout  = 30 * time.Second
)

// session is one running operator over one namespace: what the
// measurements act on.
type session struct {
	client kubernetes.Interface
	ns     string
	op     *Operator
	keys   []string
	// mem samples the operator's memory from its start; metrics reads its
	// /metrics once it listens.
	mem     *memSampler
	metrics *metricsScraper
	// first is the operator's first converge.
	first Converge
	// profiles are the CPU profiles of the first converge, with
	// OperatorOptions.CPUProfile.
	profiles []string
}

// createNamespace creates a namespace with the operator's ConfigMap,
// empty: modules/values.yaml enables every module.
func createNamespace(ctx context.Context, client kubernetes.Interface, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create namespace %s: %w", name, err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: ConfigMapName}, Data: map[string]string{}}
	if _, err := client.CoreV1().ConfigMaps(name).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create ConfigMap %s: %w", ConfigMapName, err)
	}
	return nil
}

// startConverged starts the operator and waits for the end of its first
// converge, the log line "first converge done", and reads what it cost.
func startConverged(ctx context.Context, client kubernetes.Interface, o OperatorOptions) (*session, error) {
	op, err := StartOperator(ctx, o)
	if err != nil {
		return nil, err
	}
	s := &session{client: client, ns: o.Namespace, op: op, keys: o.Layout.Keys, mem: startMemSampler(ctx, op.Pid(), memInterval)}
	var prof *cpuProfiler
	if o.CPUProfile != "" {
		prof = startCPUProfile(ctx, op.Socket, o.CPUProfile)
	}
	err = s.waitConverged(ctx)
	if prof != nil {
		files, perr := prof.stop()
		err = errors.Join(err, perr)
		if perr == nil {
			s.profiles = files
		}
	}
	if err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// waitConverged waits for the first converge and reads its costs into
// s.first. The request metrics count from the operator's start: the
// counters begin at zero in the process.
func (s *session) waitConverged(ctx context.Context) error {
	wctx, cancel := context.WithTimeout(ctx, convergeTimeout)
	defer cancel()
	e, err := s.op.Logs.Wait(wctx, 0, Message(msgConverged))
	if err != nil {
		return fmt.Errorf("wait for the first converge (log %s): %w", s.op.LogPath(), err)
	}
	mem := s.mem.Peak()
	cpu, err := readCPU(s.op.Pid())
	if err != nil {
		return err
	}
	rss, err := peakRSS(s.op.Pid())
	if err != nil {
		return err
	}
	addr, err := s.op.Address(wctx)
	if err != nil {
		return fmt.Errorf("log %s: %w", s.op.LogPath(), err)
	}
	s.metrics = newMetricsScraper(addr)
	api, err := s.metrics.scrape(ctx)
	if err != nil {
		return err
	}
	hz := clockTicks(ctx)
	s.first = Converge{
		Wall: e.Seen.Sub(s.op.Started), OperatorCPU: cpuDuration(cpu.self, hz), HooksCPU: cpuDuration(cpu.children, hz),
		PeakRSS: rss, Mem: mem, API: api, Phases: phasesOf(s.op.Started, s.op.Logs.Since(0)),
	}
	return nil
}

// stopSampling ends the memory sampling and returns its peak.
func (s *session) stopSampling() MemPeak { return s.mem.Stop() }

// stop ends the memory sampling and the operator.
func (s *session) stop() {
	s.mem.Stop()
	s.op.Stop()
}

// configChange sets key's section in the operator's ConfigMap and times
// until the module's rendered ConfigMap shows the new value and the
// beforeHelm hook's value derived from it.
func (s *session) configChange(ctx context.Context, key, token string) (Sample, error) {
	mark := s.op.Logs.Mark()
	before, err := s.metrics.scrape(ctx)
	if err != nil {
		return Sample{}, err
	}
	act := func(ctx context.Context) error { return s.setConfigKey(ctx, key, KeyConfig+": "+token+"\n") }
	want := map[string]string{KeyConfig: token, KeyFromHook: "hook-" + token}
	d, err := s.timeUntil(ctx, key, act, dataIs(want))
	if err != nil {
		return Sample{}, fmt.Errorf("module %s: ConfigMap change: %w", key, err)
	}
	return s.sample(ctx, d, key, mark, before)
}

// event creates a ConfigMap that key's kubernetes hook watches and times
// until the module's rendered ConfigMap lists its value.
func (s *session) event(ctx context.Context, key, token string) (Sample, error) {
	mark := s.op.Logs.Mark()
	before, err := s.metrics.scrape(ctx)
	if err != nil {
		return Sample{}, err
	}
	act := func(ctx context.Context) error {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "watched-" + token, Labels: map[string]string{WatchLabel: key}},
			Data:       map[string]string{"value": token},
		}
		if _, err := s.client.CoreV1().ConfigMaps(s.ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create watched ConfigMap: %w", err)
		}
		return nil
	}
	d, err := s.timeUntil(ctx, key, act, dataHasWord(KeyWatched, token))
	if err != nil {
		return Sample{}, fmt.Errorf("module %s: watched event: %w", key, err)
	}
	return s.sample(ctx, d, key, mark, before)
}

// heal deletes key's rendered ConfigMap and times until it is back. ok is
// false when it is not back within limit.
func (s *session) heal(ctx context.Context, key string, limit time.Duration) (d time.Duration, ok bool, err error) {
	hctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	act := func(ctx context.Context) error {
		if err := s.client.CoreV1().ConfigMaps(s.ns).Delete(ctx, key, metav1.DeleteOptions{}); err != nil {
			return fmt.Errorf("delete rendered ConfigMap: %w", err)
		}
		return nil
	}
	d, err = s.timeUntil(hctx, key, act, added)
	switch {
	case err == nil:
		return d, true, nil
	case ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded):
		return 0, false, nil
	default:
		return 0, false, fmt.Errorf("module %s: heal: %w", key, err)
	}
}

func (s *session) timeUntil(ctx context.Context, name string, act func(context.Context) error, cond func(watch.Event) bool) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, reactionTimeout)
	defer cancel()
	return timeUntil(ctx, s.client, s.ns, name, act, cond)
}

// sample waits for the module run that applied a change, so the next
// measurement starts from a quiet operator, reads its durations from the
// log and the requests since before (a scrape just before the change)
// from /metrics. A run that does not finish in time leaves the durations
// zero.
func (s *session) sample(ctx context.Context, total time.Duration, key string, mark int, before APIRequests) (Sample, error) {
	wctx, cancel := context.WithTimeout(ctx, runDoneTimeout)
	defer cancel()
	_, err := s.op.Logs.Wait(wctx, mark, Message(msgRunDone, "module", key))
	switch {
	case ctx.Err() != nil:
		return Sample{}, ctx.Err()
	case errors.Is(err, ErrExited):
		return Sample{}, fmt.Errorf("module %s: %w (log %s)", key, err, s.op.LogPath())
	}
	after, err := s.metrics.scrape(ctx)
	if err != nil {
		return Sample{}, err
	}
	x := sampleOf(total, key, s.op.Logs.Since(mark))
	x.API = after.Sub(before)
	return x, nil
}

// setConfigKey sets one key of the operator's ConfigMap, keeping the rest.
func (s *session) setConfigKey(ctx context.Context, key, value string) error {
	cms := s.client.CoreV1().ConfigMaps(s.ns)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm, err := cms.Get(ctx, ConfigMapName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		cm.Data[key] = value
		_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("update ConfigMap %s: %w", ConfigMapName, err)
	}
	return nil
}
