package nelm

import (
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/addon-operator/addon-operator/pkg/helm"
)

type annotationsRecorder struct {
	got [][]string
}

func (a *annotationsRecorder) AnnotationsIgnored(_ string, annotations []string) {
	a.got = append(a.got, annotations)
}

func TestNelmAnnotationsWarnedOncePerModule(t *testing.T) {
	r := &helm.Rendered{
		Manifest: `apiVersion: v1
kind: ConfigMap
metadata:
  name: a
  annotations:
    werf.io/weight: "-10"
    werf.io/deploy-dependency-db: state=ready,kind=StatefulSet,name=db
    app.external-dependency.werf.io/resource: deployment/app
    werf.io/show-service-messages: "true"
    werf.io/resource-policy: keep
    werf.io/delete-policy: before-creation
    project.werf.io/name: x
---
apiVersion: v1
kind: Secret
metadata:
  name: b
  annotations:
    werf.io/ownership: anyone
    werf.io/deploy-dependency-a: state=present,kind=ConfigMap,name=a
---
apiVersion: v1
kind: Secret
metadata:
  name: c
  annotations:
    werf.io/ownership: release
`,
		Hooks: []string{
			"# Source: x/templates/job.yaml\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n  annotations:\n    werf.io/delete-policy: before-creation,succeeded\n",
			"# Source: x/templates/job2.yaml\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: k\n  annotations:\n    werf.io/delete-policy: before-creation-if-immutable\n    db.external-dependency.werf.io/resource: secret/db\n",
		},
	}
	got := Unhonoured(r)
	keys := make([]string, 0, len(got))
	for _, g := range got {
		keys = append(keys, strings.SplitN(g, " (", 2)[0])
	}
	// Honoured, and so not named: the weight, a deploy dependency on a
	// ready object, an external dependency of a release object,
	// resource-policy: keep, ownership: release, a hook's before-creation
	// and succeeded.
	want := []string{
		"<id>.external-dependency.werf.io/* on chart hooks", "werf.io/delete-policy", "werf.io/delete-policy: before-creation-if-immutable",
		"werf.io/deploy-dependency-*: state=present", "werf.io/ownership: anyone",
	}
	if !slices.Equal(keys, want) {
		t.Fatalf("annotations %q, want %q", got, want)
	}
	if !strings.Contains(got[1], "release objects are not recreated") {
		t.Errorf("delete-policy warning %q does not say that it is ignored on release objects", got[1])
	}
	if !strings.Contains(got[4], "release annotations are still set") {
		t.Errorf("ownership warning %q does not say what is not done", got[4])
	}

	if entry, what := partly("werf.io/deploy-dependency-db", "state=ready,name=db", true); entry != "werf.io/deploy-dependency-* on chart hooks" || what == "" {
		t.Errorf("a chart hook's deploy dependency: %q (%q), want it named as not honoured", entry, what)
	}

	events := &annotationsRecorder{}
	o := NewWarnings(slog.New(slog.DiscardHandler), events)
	o.Warn("m", r)
	o.Warn("m", r)
	o.Warn("other", &helm.Rendered{Manifest: "kind: ConfigMap\nmetadata:\n  name: c\n"})
	if len(events.got) != 1 || len(events.got[0]) != len(want) {
		t.Fatalf("events %q, want one naming %d annotations", events.got, len(want))
	}
	// A changed set is warned about again.
	o.Warn("m", &helm.Rendered{Manifest: "kind: ConfigMap\nmetadata:\n  name: c\n  annotations:\n    werf.io/fail-mode: x\n"})
	if len(events.got) != 2 || len(events.got[1]) != 1 {
		t.Fatalf("events %q after the set changed", events.got)
	}
	// Another operator keeps its own record: it warns too.
	other := NewWarnings(slog.New(slog.DiscardHandler), events)
	other.Warn("m", r)
	if len(events.got) != 3 {
		t.Fatalf("events %q: a second operator did not warn", events.got)
	}
}
