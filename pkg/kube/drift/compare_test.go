package drift

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDriftDiffs(t *testing.T) {
	tests := []struct {
		name    string
		applied string // the dry-run apply's result
		live    string
		diff    []string
	}{
		{name: "equal", applied: `{data: {a: "1", b: x}}`, live: `{data: {a: "1", b: x}}`},
		{name: "a changed value", applied: `{data: {a: "1", b: x}}`, live: `{data: {a: "2", b: x}}`, diff: []string{"data.a"}},
		{name: "a removed key", applied: `{data: {a: "1", b: x}}`, live: `{data: {b: x}}`, diff: []string{"data.a"}},
		{name: "a key the apply would remove", applied: `{data: {a: "1"}}`, live: `{data: {a: "1", gone: y}}`, diff: []string{"data.gone"}},
		{name: "a whole map removed", applied: `{data: {a: "1", b: x}}`, live: `{}`, diff: []string{"data"}},
		{name: "keys that are not words", applied: `{data: {config.yaml: x, "": y}}`, live: `{data: {config.yaml: z, "": w}}`,
			diff: []string{`data[""]`, `data["config.yaml"]`}},
		{name: "status never", applied: `{status: {phase: Ready}}`, live: `{status: {phase: Failed}}`},
		{name: "apiVersion and kind are not compared", applied: `{apiVersion: v1, kind: A}`, live: `{apiVersion: v2, kind: B}`},
		{name: "metadata noise",
			applied: `{metadata: {name: a, resourceVersion: "1", generation: 3, managedFields: [{manager: x}], labels: {app: a}}}`,
			live:    `{metadata: {name: a, resourceVersion: "9", generation: 2, managedFields: [{manager: y}], labels: {app: a}}}`},
		{name: "a label and an annotation",
			applied: `{metadata: {labels: {app.kubernetes.io/name: a}, annotations: {note: x}}}`,
			live:    `{metadata: {labels: {app.kubernetes.io/name: b}, annotations: {note: y}}}`,
			diff:    []string{`metadata.annotations.note`, `metadata.labels["app.kubernetes.io/name"]`}},
		{name: "numbers of either type", applied: `{spec: {replicas: 3, ratio: 0.5, big: 2.0}}`, live: `{spec: {replicas: 3.0, ratio: 0.5, big: 2}}`},
		{name: "a changed number", applied: `{spec: {replicas: 3}}`, live: `{spec: {replicas: 5}}`, diff: []string{"spec.replicas"}},
		{name: "a number is not its string", applied: `{spec: {port: 80}}`, live: `{spec: {port: "80"}}`, diff: []string{"spec.port"}},
		{name: "empty maps and lists are absent", applied: `{spec: {a: {}, b: [], c: null}}`, live: `{spec: {}}`},
		{name: "an empty list filled", applied: `{spec: {args: []}}`, live: `{spec: {args: [a]}}`, diff: []string{"spec.args[0]"}},
		{name: "a type changed", applied: `{spec: {selector: {app: a}, args: [a]}}`, live: `{spec: {selector: x, args: {a: b}}}`,
			diff: []string{"spec.args", "spec.selector"}},
		{name: "list items by position", applied: `{spec: {args: [a, b, c]}}`, live: `{spec: {args: [a, x]}}`,
			diff: []string{"spec.args[1]", "spec.args[2]"}},
		{name: "an item the apply would remove", applied: `{spec: {args: [a]}}`, live: `{spec: {args: [a, b]}}`, diff: []string{"spec.args[1]"}},
		{name: "one volume mounted at two paths",
			applied: `{spec: {containers: [{name: app, volumeMounts: [{name: data, mountPath: /a}, {name: data, mountPath: /b}]}]}}`,
			live:    `{spec: {containers: [{name: app, volumeMounts: [{name: data, mountPath: /a}, {name: data, mountPath: /b}]}]}}`},
		{name: "a container image",
			applied: `{spec: {containers: [{name: sidecar, image: s}, {name: app, image: a}]}}`,
			live:    `{spec: {containers: [{name: sidecar, image: s}, {name: app, image: b}]}}`,
			diff:    []string{"spec.containers[1].image"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, path := range driftDiffs(testObject(t, tt.applied), testObject(t, tt.live)) {
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
	applied := testObject(t, `{spec: {containers: [{name: sidecar}, {name: app, image: a}]}}`)
	live := testObject(t, `{spec: {containers: [{name: sidecar}, {name: app, image: b}]}}`)
	diffs := driftDiffs(applied, live)
	if len(diffs) != 1 {
		t.Fatalf("diffs = %d, want 1", len(diffs))
	}
	step := diffs[0][2]
	item, _ := step.item.(map[string]any)
	if step.index != 1 || step.live != 1 || item["name"] != "app" {
		t.Errorf("list step = index %d, live %d, item %v; want 1, 1 and the app container", step.index, step.live, step.item)
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
