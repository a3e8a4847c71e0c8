package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/addon-operator/addon-operator/e2e/cluster"
	v1 "github.com/addon-operator/addon-operator/pkg/apis/v1alpha1"
)

// The operator's metrics the comparison reads.
const metricObjectWrites = "addon_operator_module_object_writes_total"

// objectsSettle is how long the write count must stay unchanged after the
// first converge to count as all the converge's writes.
const objectsSettle = 3 * time.Second

// ObjectsRun is one first converge with or without Module objects.
type ObjectsRun struct {
	Objects bool
	Wall    time.Duration
	// Logged is start-to-converged by the operator's own log times, which
	// the harness's reading of the log does not delay; RunSum the sum of
	// its module runs.
	Logged, RunSum time.Duration
	// Writes are the Module object writes by operation, once they settled
	// after the converge; AtConverge their total when it ended.
	Writes     map[string]int
	AtConverge int
	// Reconverge is from a change of the global values (every module runs
	// and upgrades) until the converge it starts is counted done;
	// ReconvergeWrites the Module object writes it caused, settled.
	Reconverge       time.Duration
	ReconvergeWrites int
}

// CompareObjects measures start-to-converged over n modules with Module
// objects (the CRDs installed, --module-objects) and without
// (--module-objects=false), rounds times each, alternating which goes
// first, in fresh namespaces of one control plane.
func CompareObjects(ctx context.Context, env Env, n, rounds int) (res []ObjectsRun, err error) {
	dir := filepath.Join(env.Dir, "objects")
	layout, err := env.generate(dir, n)
	if err != nil {
		return nil, err
	}
	cp, client, err := env.startCluster(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, stopCluster(cp)) }()
	if err := installCRDs(ctx, cp); err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		return nil, err
	}
	for round := range rounds {
		for k := range 2 {
			with := (round+k)%2 == 0
			// Every run creates its objects anew.
			if err := dyn.Resource(v1.ModulesResource()).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
				return res, fmt.Errorf("delete module objects: %w", err)
			}
			name := fmt.Sprintf("r%d-objects-%t", round, with)
			s, err := env.converge(ctx, cp, client, layout, opts{
				dir: filepath.Join(dir, name), ns: "bench-" + name, workers: 4,
				args: []string{fmt.Sprintf("--module-objects=%t", with)},
			})
			if err != nil {
				return res, err
			}
			p := s.first.Phases
			r := ObjectsRun{Objects: with, Wall: s.first.Wall, RunSum: p.RunSum,
				Logged: p.Discovery + p.Setup + p.HookConfig + p.Planning + p.ModuleRuns}
			r.Writes, r.AtConverge, err = settledWrites(ctx, s.metrics.url)
			if err == nil {
				err = s.reconverge(ctx, round, &r)
			}
			s.stop()
			if err != nil {
				return res, err
			}
			env.progressf("objects round %d: module objects %t, N=%d converged in %s, %d writes; re-converged in %s, %d writes",
				round+1, with, n, r.Wall.Round(time.Millisecond), total(r.Writes), r.Reconverge.Round(time.Millisecond), r.ReconvergeWrites)
			res = append(res, r)
		}
	}
	return res, nil
}

// reconverge changes the global values and times the converge that
// follows, then counts the Module object writes it caused.
func (s *session) reconverge(ctx context.Context, round int, r *ObjectsRun) error {
	before, err := scrapeCounter(ctx, s.metrics.url, metricConverges, "outcome")
	if err != nil {
		return err
	}
	start := time.Now()
	if err := s.setConfigKey(ctx, "global", fmt.Sprintf("benchRound: %d\n", round)); err != nil {
		return err
	}
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, convergeTimeout, true, func(ctx context.Context) (bool, error) {
		now, err := scrapeCounter(ctx, s.metrics.url, metricConverges, "outcome")
		return total(now) > total(before), err
	})
	if err != nil {
		return fmt.Errorf("wait for the converge after a global change: %w", err)
	}
	r.Reconverge = time.Since(start)
	writes, _, err := settledWrites(ctx, s.metrics.url)
	r.ReconvergeWrites = total(writes) - total(r.Writes)
	return err
}

// installCRDs creates the addon-operator.io CRDs and waits until they are
// established.
func installCRDs(ctx context.Context, cp *cluster.ControlPlane) error {
	c, err := apiextensions.NewForConfig(cp.Config)
	if err != nil {
		return err
	}
	crds := c.ApiextensionsV1().CustomResourceDefinitions()
	for _, doc := range v1.CRDs() {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(doc, &crd); err != nil {
			return err
		}
		if _, err := crds.Create(ctx, &crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create CRD %s: %w", crd.Name, err)
		}
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			got, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
			if err != nil {
				return false, nil //nolint:nilerr // not there yet: poll again
			}
			for _, cond := range got.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("CRD %s not established: %w", crd.Name, err)
		}
	}
	return nil
}

// settledWrites reads the writes of Module objects until the count has
// not changed for objectsSettle; it returns them with the first count.
func settledWrites(ctx context.Context, url string) (writes map[string]int, first int, err error) {
	read := func() (map[string]int, error) { return scrapeCounter(ctx, url, metricObjectWrites, "operation") }
	if writes, err = read(); err != nil {
		return nil, 0, err
	}
	first = total(writes)
	last, since := first, time.Now()
	deadline := time.Now().Add(time.Minute)
	for time.Since(since) < objectsSettle && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
		if writes, err = read(); err != nil {
			return nil, 0, err
		}
		if t := total(writes); t != last {
			last, since = t, time.Now()
		}
	}
	return writes, first, nil
}

// scrapeCounter reads a counter family from the operator's /metrics, by
// the value of one label.
func scrapeCounter(ctx context.Context, url, name, label string) (map[string]int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, http.NoBody)
	if err != nil {
		return nil, err
	}
	resp, err := (&http.Client{Timeout: scrapeTimeout}).Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	return parseCounter(resp.Body, name, label)
}

// parseCounter reads a counter family by the value of one label from a
// /metrics text; an absent family is empty.
func parseCounter(r io.Reader, name, label string) (map[string]int, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parse metrics: %w", err)
	}
	out := map[string]int{}
	if f, ok := families[name]; ok {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label {
					out[l.GetValue()] += int(m.GetCounter().GetValue())
				}
			}
		}
	}
	return out, nil
}

func total(writes map[string]int) int {
	n := 0
	for _, c := range writes {
		n += c
	}
	return n
}

// ObjectsMarkdown renders the comparison: medians of start-to-converged
// with and without Module objects, the overhead, and the writes.
func ObjectsMarkdown(n int, runs []ObjectsRun) string {
	var with, without, reWith, reWithout, logWith, logWithout, sumWith, sumWithout []time.Duration
	var writes, reWrites []string
	for _, r := range runs {
		if !r.Objects {
			without, reWithout = append(without, r.Wall), append(reWithout, r.Reconverge)
			logWithout, sumWithout = append(logWithout, r.Logged), append(sumWithout, r.RunSum)
			continue
		}
		with, reWith = append(with, r.Wall), append(reWith, r.Reconverge)
		logWith, sumWith = append(logWith, r.Logged), append(sumWith, r.RunSum)
		writes = append(writes, fmt.Sprintf("%d (create %d, status %d; %d when the converge ended)",
			total(r.Writes), r.Writes["create"], r.Writes["status"], r.AtConverge))
		reWrites = append(reWrites, strconv.Itoa(r.ReconvergeWrites))
	}
	var b strings.Builder
	b.WriteString("| N | converge | without Module objects, median | with, median | overhead | writes (each round) |\n")
	b.WriteString("| ---: | --- | ---: | ---: | ---: | --- |\n")
	row := func(what string, without, with []time.Duration, writes []string) {
		mw, mo := median(without), median(with)
		overhead := "n/a"
		if mw > 0 {
			overhead = fmt.Sprintf("%+.1f%%", 100*(float64(mo)-float64(mw))/float64(mw))
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s |\n", n, what, formatDuration(mw), formatDuration(mo), overhead, strings.Join(writes, "; "))
	}
	row("first (start to converged)", without, with, writes)
	row("first, by the operator's log", logWithout, logWith, nil)
	row("first, Σ module runs", sumWithout, sumWith, nil)
	row("after a global change", reWithout, reWith, reWrites)
	return b.String()
}
