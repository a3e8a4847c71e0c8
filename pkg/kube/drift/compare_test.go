package drift

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDriftDiffs(t *testing.T) {
	tests := []struct {
		name string
		want string // the manifest object
		live string
		diff []string
	}{
		{name: "equal", want: `{data: {a: "1", b: x}}`, live: `{data: {a: "1", b: x}}`},
		{name: "a changed value", want: `{data: {a: "1", b: x}}`, live: `{data: {a: "2", b: x}}`, diff: []string{"data.a"}},
		{name: "a removed key", want: `{data: {a: "1", b: x}}`, live: `{data: {b: x}}`, diff: []string{"data.a"}},
		{name: "a key the manifest does not set", want: `{data: {a: "1"}}`, live: `{data: {a: "1", extra: y}}`},
		{name: "a whole map removed", want: `{data: {a: "1", b: x}}`, live: `{}`, diff: []string{"data.a", "data.b"}},
		{name: "keys that are not words", want: `{data: {config.yaml: x, "": y}}`, live: `{data: {config.yaml: z, "": w}}`,
			diff: []string{`data[""]`, `data["config.yaml"]`}},
		{name: "status never", want: `{status: {phase: Ready}}`, live: `{status: {phase: Failed}}`},
		{name: "apiVersion and kind are not compared", want: `{apiVersion: v1, kind: A}`, live: `{apiVersion: v2, kind: B}`},
		{name: "metadata but labels and annotations",
			want: `{metadata: {name: a, namespace: n, resourceVersion: "1", finalizers: [x], labels: {app: a}}}`,
			live: `{metadata: {name: a, namespace: n, resourceVersion: "9", labels: {app: a, added: b}, annotations: {c: d}}}`},
		{name: "a label and an annotation",
			want: `{metadata: {labels: {app.kubernetes.io/name: a}, annotations: {note: x}}}`,
			live: `{metadata: {labels: {app.kubernetes.io/name: b}, annotations: {note: y}}}`,
			diff: []string{`metadata.annotations.note`, `metadata.labels["app.kubernetes.io/name"]`}},
		{name: "numbers of either type", want: `{spec: {replicas: 3, ratio: 0.5, big: 2.0}}`, live: `{spec: {replicas: 3.0, ratio: 0.5, big: 2}}`},
		{name: "a changed number", want: `{spec: {replicas: 3}}`, live: `{spec: {replicas: 5}}`, diff: []string{"spec.replicas"}},
		{name: "a number is not its string", want: `{spec: {port: 80}}`, live: `{spec: {port: "http"}}`, diff: []string{"spec.port"}},
		{name: "canonical quantities",
			want: `{spec: {resources: {limits: {memory: 1024Mi, cpu: 1}, requests: {cpu: "0.5", memory: 1e3}}}}`,
			live: `{spec: {resources: {limits: {memory: 1Gi, cpu: "1"}, requests: {cpu: 500m, memory: "1k"}}}}`},
		{name: "a changed quantity", want: `{spec: {resources: {limits: {memory: 1Gi}}}}`, live: `{spec: {resources: {limits: {memory: 2Gi}}}}`,
			diff: []string{"spec.resources.limits.memory"}},
		{name: "data are strings, not quantities", want: `{data: {size: 1024Mi}}`, live: `{data: {size: 1Gi}}`, diff: []string{"data.size"}},
		{name: "zero values the server drops", want: `{spec: {a: "", b: false, c: 0, d: x}}`, live: `{spec: {}}`, diff: []string{"spec.d"}},
		{name: "a zero value that was changed", want: `{spec: {flag: false}}`, live: `{spec: {flag: true}}`, diff: []string{"spec.flag"}},
		{name: "nulls and empty maps set nothing",
			want: `{spec: {template: {metadata: {creationTimestamp: null}, spec: {resources: {}}}}}`, live: `{spec: {template: {spec: {}}}}`},
		{name: "an empty list and an absent one", want: `{spec: {args: []}}`, live: `{spec: {}}`},
		{name: "an empty list filled", want: `{spec: {args: []}}`, live: `{spec: {args: [a]}}`, diff: []string{"spec.args"}},
		{name: "a type changed", want: `{spec: {selector: {app: a}, args: [a]}}`, live: `{spec: {selector: x, args: {a: b}}}`,
			diff: []string{"spec.args", "spec.selector"}},
		{name: "list items by position", want: `{spec: {args: [a, b, c]}}`, live: `{spec: {args: [a, x]}}`,
			diff: []string{"spec.args[1]", "spec.args[2]"}},
		{name: "items others append", want: `{spec: {args: [a]}}`, live: `{spec: {args: [a, b]}}`},
		{name: "named items by name, positions from the manifest",
			want: `{spec: {containers: [{name: app, image: a, env: [{name: X, value: "1"}]}, {name: gone, image: g}]}}`,
			live: `{spec: {containers: [{name: sidecar, image: s}, {name: app, image: b, env: [{name: X, value: "1"}]}]}}`,
			diff: []string{"spec.containers[0].image", "spec.containers[1].image", "spec.containers[1].name"}},
		{name: "named items reordered", want: `{spec: {volumes: [{name: a, emptyDir: {}}, {name: b, secret: {secretName: s}}]}}`,
			live: `{spec: {volumes: [{name: b, secret: {secretName: s}}, {name: a, emptyDir: {}}]}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, path := range driftDiffs(testObject(t, tt.want), testObject(t, tt.live)) {
				got = append(got, pathString(path))
			}
			if d := cmp.Diff(tt.diff, got); d != "" {
				t.Errorf("differing fields (-want +got):\n%s", d)
			}
		})
	}
}

// The steps of a list item carry the live item it was compared with, which
// ownership lookups (k: and v: entries) need.
func TestDriftDiffsCarryTheLiveItem(t *testing.T) {
	want := testObject(t, `{spec: {containers: [{name: app, image: a}]}}`)
	live := testObject(t, `{spec: {containers: [{name: sidecar}, {name: app, image: b}]}}`)
	diffs := driftDiffs(want, live)
	if len(diffs) != 1 {
		t.Fatalf("diffs = %d, want 1", len(diffs))
	}
	step := diffs[0][2]
	item, _ := step.item.(map[string]any)
	if step.index != 0 || step.live != 1 || item["name"] != "app" {
		t.Errorf("list step = index %d, live %d, item %v; want 0, 1 and the app container", step.index, step.live, step.item)
	}
}

func TestDriftPathRoundTrip(t *testing.T) {
	for _, field := range []string{
		"data.key",
		"spec.template.spec.containers[0].image",
		`metadata.labels["app.kubernetes.io/name"]`,
		`data["config.yaml"]`,
		`data[""]`,
		`data["with \"quotes\" and ] brackets"]`,
		`spec.args[12]`,
		`[0]`,
		`a_b.C-d[1][2].e`,
	} {
		path, err := parsePath(field)
		if err != nil {
			t.Errorf("parsePath(%s): %v", field, err)
			continue
		}
		if got := pathString(path); got != field {
			t.Errorf("round trip of %s = %s", field, got)
		}
	}
}

func TestDriftParsePathErrors(t *testing.T) {
	for _, field := range []string{".a", "a..b", "a.", "a[", "a[x]", "a[-1]", `a["x"`, `a["x`, "a[1]b"} {
		if path, err := parsePath(field); err == nil {
			t.Errorf("parsePath(%s) = %v, want an error", field, path)
		}
	}
}
