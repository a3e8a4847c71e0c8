package operator

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
	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// Charts written for Deckhouse carry annotations of nelm, the deploy
// engine of werf and Deckhouse, that change how a release is applied. The
// operator applies releases with the Helm library, which acts on none of
// them: Helm creates a release's objects in its own kind order, in one
// apply, so werf.io/weight cannot order objects of one release, nor can
// deploy-dependency-* or external-dependency wait for anything; objects
// are always owned by their release (ownership), deleted with it unless
// helm.sh/resource-policy: keep (werf.io/resource-policy is not that),
// and chart hooks follow helm.sh/hook-delete-policy only. Rather than
// apply some of them differently than nelm would, the operator names what
// a module's chart asks for and is ignored, once per module (again when
// the set changes): a warning in the log and a Warning Event.
// Objects that must exist first belong in another module the first one
// requires (module.yaml requirements), or in a chart hook with a
// helm.sh/hook-weight.

// nelmIgnored describes, by annotation (a trailing * stands for any
// suffix), what is not done.
func nelmIgnored() map[string]string {
	return map[string]string{
		"werf.io/weight":                             "objects are created in Helm's kind order, not by weight",
		"werf.io/deploy-dependency-*":                "no wait for the named objects",
		"werf.io/delete-dependency-*":                "no wait before deleting",
		"external-dependency.werf.io/*":              "no wait for external objects",
		"werf.io/ownership":                          "objects are owned by their release",
		"werf.io/delete-policy":                      "objects are not recreated or deleted by policy",
		"werf.io/delete-propagation":                 "Helm's deletion propagation applies",
		"werf.io/resource-policy":                    "use helm.sh/resource-policy: keep to keep an object",
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

// nelmAnnotationKey returns the entry of nelmIgnored that key is, or "".
// Annotations of werf.io that only show logs or label the project are not
// deploy behaviour and are left alone.
func nelmAnnotationKey(key string, ignored map[string]string) string {
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
		// external-dependency.werf.io/* is "<name>.external-dependency.werf.io/resource".
		if _, rest, ok := strings.Cut(key, "."); ok && strings.HasPrefix(rest, prefix) {
			return pattern
		}
	}
	return ""
}

// nelmAnnotations returns, sorted, "<annotation> (<what is not done>)" for
// each nelm annotation the rendered objects and chart hooks carry.
func nelmAnnotations(r *helm.Rendered) []string {
	ignored := nelmIgnored()
	found := map[string]bool{}
	for _, manifest := range append([]string{r.Manifest}, r.Hooks...) {
		if !strings.Contains(manifest, "werf.io/") {
			continue
		}
		reader := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(manifest)))
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
			for key := range obj.Metadata.Annotations {
				if k := nelmAnnotationKey(key, ignored); k != "" {
					found[k] = true
				}
			}
		}
	}
	out := make([]string, 0, len(found))
	for _, k := range slices.Sorted(maps.Keys(found)) {
		out = append(out, k+" ("+ignored[k]+")")
	}
	return out
}

// annotationsEvents records the Event of ignored annotations;
// *event.Recorder is the real one.
type annotationsEvents interface {
	AnnotationsIgnored(module string, annotations []string)
}

// nelmWarned holds, by operator and module, the ignored annotations last
// warned about.
//
//nolint:gochecknoglobals // keyed by operator: the Operator's fields are not this file's
var nelmWarned sync.Map

type nelmWarnedKey struct {
	o      *Operator
	module string
}

// warnNelmAnnotations warns, once per module and set of annotations, that
// the rendered chart of module name carries nelm annotations the release
// ignores.
func (o *Operator) warnNelmAnnotations(name string, r *helm.Rendered) {
	found := nelmAnnotations(r)
	key := nelmWarnedKey{o: o, module: name}
	joined := strings.Join(found, "; ")
	if prev, ok := nelmWarned.Load(key); (ok && prev == joined) || (!ok && len(found) == 0) {
		return
	}
	nelmWarned.Store(key, joined)
	if len(found) == 0 {
		return
	}
	o.log.Warn("chart annotations of nelm ignored: Helm applies the release", slog.String(logkey.Module, name), slog.Any(logkey.Reason, found))
	if ev, ok := o.moduleEvents.(annotationsEvents); ok {
		ev.AnnotationsIgnored(name, found)
	}
}
