package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
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

// metricObjectWrites counts the operator's writes of Module objects.
const metricObjectWrites = "addon_operator_module_object_writes_total"

// objectsSettle is how long the write count must stay unchanged after the
// first converge to count as all the converge's writes.
const objectsSettle = 3 * time.Second

// ObjectsRun is one first converge with or without Module objects.
type ObjectsRun struct {
	Objects bool
	Wall    time.Duration
	// Writes are the Module object writes by operation, once they settled
	// after the converge; AtConverge their total when it ended.
	Writes     map[string]int
	AtConverge int
}

// CompareObjects measures start-to-converged over n modules with Module
// objects (the CRDs installed, --module-objects) and without
// (--module-objects=false), rounds times each, alternating which goes
// first, in fresh namespaces of one control plane.
func CompareObjects(ctx context.Context, env Env, n, rounds int) (res []ObjectsRun, err error) {
	dir := filepath.Join(env.Dir, "objects")
	layout, err := Generate(dir, n, env.GroupSize)
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
			r := ObjectsRun{Objects: with, Wall: s.first.Wall}
			r.Writes, r.AtConverge, err = settledWrites(ctx, s.metrics.url)
			s.stop()
			if err != nil {
				return res, err
			}
			env.progressf("objects round %d: module objects %t, N=%d converged in %s, %d writes", round+1, with, n,
				r.Wall.Round(time.Millisecond), total(r.Writes))
			res = append(res, r)
		}
	}
	return res, nil
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
	client := &http.Client{Timeout: scrapeTimeout}
	read := func() (map[string]int, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, http.NoBody)
		if err != nil {
			return nil, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, fmt.Errorf("scrape %s: %w", url, err)
		}
		defer func() { _ = resp.Body.Close() }()
		return parseObjectWrites(resp.Body)
	}
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

// parseObjectWrites reads the Module object writes by operation from a
// /metrics text.
func parseObjectWrites(r io.Reader) (map[string]int, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parse metrics: %w", err)
	}
	out := map[string]int{}
	if f, ok := families[metricObjectWrites]; ok {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "operation" {
					out[l.GetValue()] = int(m.GetCounter().GetValue())
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
	var with, without []time.Duration
	var writes []string
	for _, r := range runs {
		if !r.Objects {
			without = append(without, r.Wall)
			continue
		}
		with = append(with, r.Wall)
		writes = append(writes, fmt.Sprintf("%d (create %d, status %d; %d when the converge ended)",
			total(r.Writes), r.Writes["create"], r.Writes["status"], r.AtConverge))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| N | without Module objects, median | with, median | overhead | writes per first converge |\n")
	b.WriteString("| ---: | ---: | ---: | ---: | --- |\n")
	mw, mo := median(without), median(with)
	overhead := "n/a"
	if mw > 0 {
		overhead = fmt.Sprintf("%+.1f%%", 100*(float64(mo)-float64(mw))/float64(mw))
	}
	fmt.Fprintf(&b, "| %d | %s | %s | %s | %s |\n", n, formatDuration(mw), formatDuration(mo), overhead, strings.Join(writes, "; "))
	return b.String()
}
