// Package nelm names the deploy annotations of nelm, the deploy engine of
// werf and Deckhouse, that a module's chart carries and its release does
// not honour, and warns of them once per module.
package nelm

import (
	"bufio"
	"errors"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/addon-operator/addon-operator/pkg/helm"
	"github.com/addon-operator/addon-operator/pkg/helm/manifest"
	"github.com/addon-operator/addon-operator/pkg/logkey"
	"github.com/addon-operator/addon-operator/pkg/release/weights"
)

// Charts written for Deckhouse carry annotations of nelm, the deploy
// engine of werf and Deckhouse, that change how a release is applied. The
// operator applies releases with the Helm library and honours what it
// can: werf.io/weight and werf.io/deploy-dependency-<id> order the
// creation of a release's objects, and <id>.external-dependency.werf.io/*
// holds an object until the object outside the release it names is ready
// (pkg/release/weights); werf.io/resource-policy: keep and
// werf.io/ownership: anyone keep an object on uninstall and when the
// chart stops rendering it (as helm.sh/resource-policy: keep); a chart
// hook's werf.io/delete-policy is its helm.sh/hook-delete-policy (see
// pkg/helm/manifest's nelm.go). For the rest, the operator names what a
// module's chart asks for and is not done, once per module (again when the
// set changes): a warning in the log and a Warning Event.

// ignoredAnnotations describes, by annotation (a trailing * stands for any
// suffix), what is not done whatever its value.
func ignoredAnnotations() map[string]string {
	return map[string]string{
		"werf.io/delete-dependency-*":                "no wait before deleting",
		"werf.io/delete-propagation":                 "Helm's deletion propagation applies",
		"werf.io/deploy-on":                          "objects deploy on every install and upgrade",
		"werf.io/replicas-on-creation":               "replicas are what the manifest says",
		"werf.io/track-termination-mode":             "readiness is the operator's own tracking",
		"werf.io/fail-mode":                          "readiness is the operator's own tracking",
		"werf.io/failures-allowed-per-replica":       "readiness is the operator's own tracking",
		"werf.io/no-activity-timeout":                "readiness is the operator's own tracking",
		"werf.io/ignore-readiness-probe-fails-for-*": "readiness is the operator's own tracking",
		"werf.io/sensitive":                          "Secrets and values marked sensitive are redacted instead",
		"werf.io/sensitive-paths":                    "Secrets and values marked sensitive are redacted instead",
	}
}

// partly returns, for the annotations honoured for some values or
// objects only, what is not done for this one ("" when all of it is).
// hook tells a chart hook from a release object.
func partly(key, value string, hook bool) (entry, what string) {
	value = strings.TrimSpace(value)
	if hook && strings.Contains(key, weights.ExternalMarker) {
		return "<id>" + weights.ExternalMarker + "* on chart hooks", "Helm creates chart hooks without waiting for external objects"
	}
	if strings.HasPrefix(key, weights.DependencyPrefix) {
		switch {
		case hook:
			return weights.DependencyPrefix + "* on chart hooks", "chart hooks are ordered by helm.sh/hook-weight"
		case strings.Contains(value, "state=present"):
			return weights.DependencyPrefix + "*: state=present", "the dependency is awaited ready, as every group created ahead of the release is"
		}
		return "", ""
	}
	switch key {
	case manifest.AnnotationWerfOwnership:
		if value == "anyone" && !hook {
			return key + ": anyone", "kept on uninstall and when no longer rendered, but Helm's release annotations are still set and checked"
		}
		if value != "release" && value != "anyone" {
			return key + ": " + value, "not a value of nelm; objects are owned by their release"
		}
	case manifest.AnnotationWerfResourcePolicy:
		if value != "keep" {
			return key + ": " + value, "only keep is honoured"
		}
	case manifest.AnnotationWerfDeletePolicy:
		if !hook {
			return key, "release objects are not recreated or deleted by policy"
		}
		for part := range strings.SplitSeq(value, ",") {
			if p := strings.TrimSpace(part); p != "before-creation" && p != "succeeded" && p != "failed" {
				return key + ": " + p, "no Helm hook delete policy; the others apply"
			}
		}
	}
	return "", ""
}

// annotationKey returns the entry of ignoredAnnotations that key is, or "".
// Annotations of werf.io that only show logs or label the project are not
// deploy behaviour and are left alone.
func annotationKey(key string, ignored map[string]string) string {
	if _, ok := ignored[key]; ok {
		return key
	}
	for pattern := range ignored {
		prefix, wild := strings.CutSuffix(pattern, "*")
		if !wild {
			continue
		}
		if strings.HasPrefix(key, prefix) {
			return pattern
		}
	}
	return ""
}

// Unhonoured returns, sorted, "<annotation> (<what is not done>)" for
// each nelm annotation the rendered objects and chart hooks carry that is
// not, or not wholly, honoured.
func Unhonoured(r *helm.Rendered) []string {
	ignored := ignoredAnnotations()
	found := map[string]string{}
	for i, text := range append([]string{r.Manifest}, r.Hooks...) {
		if !strings.Contains(text, "werf.io/") {
			continue
		}
		reader := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(text)))
		for {
			doc, err := reader.Read()
			if errors.Is(err, io.EOF) || (err != nil && len(doc) == 0) {
				break
			}
			var obj struct {
				Metadata struct {
					Annotations map[string]string `json:"annotations"`
				} `json:"metadata"`
			}
			if yaml.Unmarshal(doc, &obj) != nil {
				continue
			}
			for key, value := range obj.Metadata.Annotations {
				if k := annotationKey(key, ignored); k != "" {
					found[k] = ignored[k]
				} else if entry, what := partly(key, value, i > 0); entry != "" {
					found[entry] = what
				}
			}
		}
	}
	out := make([]string, 0, len(found))
	for _, k := range slices.Sorted(maps.Keys(found)) {
		out = append(out, k+" ("+found[k]+")")
	}
	return out
}

// Events records the Event of ignored annotations; *event.Recorder is the
// real one.
type Events interface {
	AnnotationsIgnored(module string, annotations []string)
}

// Warnings warns of the nelm annotations each module's chart carries
// that are not honoured, and holds, by module, those last warned about;
// module runs of different modules warn at once.
type Warnings struct {
	log    *slog.Logger
	events Events // nil records no Event

	mu     sync.Mutex
	warned map[string]string
}

// NewWarnings returns Warnings that log to log and record Events with
// events, which may be nil.
func NewWarnings(log *slog.Logger, events Events) *Warnings {
	return &Warnings{log: log, events: events, warned: map[string]string{}}
}

// After returns rendered followed by the warning: the release.Options
// Rendered callback.
func (w *Warnings) After(rendered func(string, *helm.Rendered)) func(string, *helm.Rendered) {
	return func(name string, r *helm.Rendered) {
		w.Warn(name, r)
		rendered(name, r)
	}
}

// changed records found as module name's set and reports whether it
// differs from the last one (no set counts as an empty one).
func (w *Warnings) changed(name, found string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.warned[name] == found {
		return false
	}
	w.warned[name] = found
	return true
}

// Warn warns, once per module and set of annotations, that the rendered
// chart of module name carries nelm annotations the release does not
// honour: a log warning and a Warning Event.
func (w *Warnings) Warn(name string, r *helm.Rendered) {
	found := Unhonoured(r)
	if !w.changed(name, strings.Join(found, "; ")) || len(found) == 0 {
		return
	}
	w.log.Warn("chart annotations of nelm not honoured: Helm applies the release", slog.String(logkey.Module, name), slog.Any(logkey.Reason, found))
	if w.events != nil {
		w.events.AnnotationsIgnored(name, found)
	}
}
