package operator

import (
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/addon-operator/addon-operator/pkg/helm"
)

type annotationsRecorder struct {
	moduleEvents
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
    project.werf.io/name: x
---
apiVersion: v1
kind: Secret
metadata:
  name: b
  annotations:
    werf.io/ownership: anyone
`,
		Hooks: []string{"# Source: x/templates/job.yaml\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n  annotations:\n    werf.io/delete-policy: before-creation\n"},
	}
	got := nelmAnnotations(r)
	keys := make([]string, 0, len(got))
	for _, g := range got {
		keys = append(keys, strings.SplitN(g, " ", 2)[0])
	}
	want := []string{"external-dependency.werf.io/*", "werf.io/delete-policy", "werf.io/deploy-dependency-*", "werf.io/ownership", "werf.io/weight"}
	if !slices.Equal(keys, want) {
		t.Fatalf("annotations %q, want %q", got, want)
	}
	if !strings.Contains(got[4], "Helm's kind order") {
		t.Errorf("weight warning %q does not say what happens instead", got[4])
	}

	events := &annotationsRecorder{}
	o := &Operator{log: slog.New(slog.DiscardHandler), moduleEvents: events}
	o.warnNelmAnnotations("m", r)
	o.warnNelmAnnotations("m", r)
	o.warnNelmAnnotations("other", &helm.Rendered{Manifest: "kind: ConfigMap\nmetadata:\n  name: c\n"})
	if len(events.got) != 1 || len(events.got[0]) != len(want) {
		t.Fatalf("events %q, want one naming %d annotations", events.got, len(want))
	}
	// A changed set is warned about again.
	o.warnNelmAnnotations("m", &helm.Rendered{Manifest: "kind: ConfigMap\nmetadata:\n  name: c\n  annotations:\n    werf.io/weight: '1'\n"})
	if len(events.got) != 2 || len(events.got[1]) != 1 {
		t.Fatalf("events %q after the set changed", events.got)
	}
}
