package guard

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/addon-operator/addon-operator/pkg/config"
)

// guardTestGuard guards modules "stateful" (needs a confirmation) and
// "plain", with team-a writing stateful, admin and alice global, and the operator as
// "op".
func guardTestGuard() *Guard {
	return &Guard{
		Writers: Writers{"stateful": {Groups: []string{"team-a"}}, config.GlobalKey: {Users: []string{"admin", "alice"}}},
		Confirmation: func(name string) (bool, string) {
			if name == "stateful" {
				return true, "its volumes are deleted"
			}
			return false, ""
		},
		Self: func(w Writer) bool { return w.Name == "op" },
	}
}

// guardMC is a ModuleConfig of a test case.
type guardMC struct {
	name        string
	enabled     *bool
	annotations map[string]string
}

func mc(name string, enabled *bool, annotations map[string]string) *guardMC {
	return &guardMC{name: name, enabled: enabled, annotations: annotations}
}

func (m *guardMC) json(t *testing.T) []byte {
	t.Helper()
	if m == nil {
		return nil
	}
	name, enabled, annotations := m.name, m.enabled, m.annotations
	spec := map[string]any{}
	if enabled != nil {
		spec["enabled"] = *enabled
	}
	obj := map[string]any{"apiVersion": "addon-operator.io/v1alpha1", "kind": "ModuleConfig",
		"metadata": map[string]any{"name": name, "annotations": annotations}, "spec": spec}
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func cmJSON(t *testing.T, data, annotations map[string]string) []byte {
	t.Helper()
	out, err := json.Marshal(map[string]any{"metadata": map[string]any{"name": "addon-operator", "annotations": annotations}, "data": data})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestGuardModuleConfig(t *testing.T) {
	yes, no := new(bool), new(bool)
	*yes = true
	teamA := Writer{Name: "alice", Groups: []string{"team-a"}}
	teamB := Writer{Name: "mallory", Groups: []string{"team-b"}}
	allow := map[string]string{AllowDisablingAnnotation: "true"}
	deckhouse := map[string]string{DeckhouseAllowDisablingAnnotation: "true"}
	for _, tc := range []struct {
		name     string
		op       string
		writer   Writer
		old, new *guardMC
		wantErr  []string // parts of the error; none: allowed
	}{
		{name: "writer enables", op: OpCreate, writer: teamA,
			new: mc("stateful", yes, nil)},
		{name: "writer disables without the annotation", op: OpUpdate, writer: teamA,
			old:     mc("stateful", yes, nil),
			new:     mc("stateful", no, nil),
			wantErr: []string{`ModuleConfig stateful disables module "stateful"`, "its volumes are deleted", AllowDisablingAnnotation + "=true"}},
		{name: "writer creates disabled", op: OpCreate, writer: teamA,
			new:     mc("stateful", no, nil),
			wantErr: []string{"its volumes are deleted"}},
		{name: "writer drops enabled: true", op: OpUpdate, writer: teamA,
			old:     mc("stateful", yes, nil),
			new:     mc("stateful", nil, nil),
			wantErr: []string{"its volumes are deleted"}},
		{name: "writer deletes an enabling object", op: OpDelete, writer: teamA,
			old:     mc("stateful", yes, nil),
			wantErr: []string{"its volumes are deleted"}},
		{name: "writer deletes an annotated object", op: OpDelete, writer: teamA,
			old: mc("stateful", yes, allow)},
		{name: "writer disables with Deckhouse's annotation", op: OpUpdate, writer: teamA,
			old: mc("stateful", yes, nil),
			new: mc("stateful", no, deckhouse)},
		{name: "annotation false confirms nothing", op: OpUpdate, writer: teamA,
			old:     mc("stateful", yes, nil),
			new:     mc("stateful", no, map[string]string{AllowDisablingAnnotation: "false"}),
			wantErr: []string{"needs a confirmation"}},
		{name: "deleting an object that said nothing", op: OpDelete, writer: teamA,
			old: mc("stateful", nil, nil)},
		{name: "deleting a disabling object", op: OpDelete, writer: teamA,
			old: mc("stateful", no, nil)},
		{name: "a module without confirmation", op: OpDelete, writer: teamB,
			old: mc("plain", yes, nil)},
		{name: "another team's module", op: OpUpdate, writer: teamB,
			old:     mc("stateful", yes, nil),
			new:     mc("stateful", yes, allow),
			wantErr: []string{`user "mallory" may not write the settings of module "stateful"`}},
		{name: "global by a non-writer", op: OpCreate, writer: teamB,
			new:     mc(config.GlobalKey, nil, nil),
			wantErr: []string{`user "mallory" may not write the settings of the global section`}},
		{name: "global by its writer", op: OpCreate, writer: Writer{Name: "admin"},
			new: mc(config.GlobalKey, nil, nil)},
		{name: "the operator itself", op: OpUpdate, writer: Writer{Name: "op"},
			old: mc(config.GlobalKey, nil, nil),
			new: mc(config.GlobalKey, nil, nil)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := Write{Operation: tc.op, Writer: tc.writer, Old: tc.old.json(t), New: tc.new.json(t)}
			checkGuardErr(t, guardTestGuard().CheckModuleConfig(w), tc.wantErr)
		})
	}
}

func TestGuardConfigMap(t *testing.T) {
	teamA := Writer{Name: "alice", Groups: []string{"team-a"}}
	teamB := Writer{Name: "mallory", Groups: []string{"team-b"}}
	base := map[string]string{"statefulEnabled": "true", "stateful": "size: 1\n", "plainEnabled": "true", "global": "a: 1\n"}
	with := func(k, v string) map[string]string {
		out := map[string]string{}
		for key, val := range base {
			out[key] = val
		}
		if v == "" {
			delete(out, k)
		} else {
			out[k] = v
		}
		return out
	}
	allow := map[string]string{AllowDisablingAnnotation: "true"}
	for _, tc := range []struct {
		name      string
		writer    Writer
		old, new  map[string]string
		annotated bool
		deleted   bool
		wantErr   []string
	}{
		{name: "Enabled false", writer: teamA, old: base, new: with("statefulEnabled", "false"),
			wantErr: []string{`ConfigMap key statefulEnabled disables module "stateful"`, "its volumes are deleted"}},
		{name: "Enabled false, annotated", writer: teamA, old: base, new: with("statefulEnabled", "false"), annotated: true},
		{name: "Enabled key removed", writer: teamA, old: base, new: with("statefulEnabled", ""),
			wantErr: []string{"its volumes are deleted"}},
		{name: "ConfigMap deleted", writer: teamA, old: base, deleted: true,
			wantErr: []string{"its volumes are deleted"}},
		{name: "ConfigMap deleted, annotated", writer: teamA, old: base, deleted: true, annotated: true},
		{name: "section changed by its writer", writer: teamA, old: base, new: with("stateful", "size: 2\n")},
		{name: "section changed by another team", writer: teamB, old: base, new: with("stateful", "size: 2\n"),
			wantErr: []string{`user "mallory" may not write the settings of module "stateful"`}},
		{name: "maintenance key by another team", writer: teamB, old: base, new: with("statefulMaintenance", "NoResourceReconciliation"),
			wantErr: []string{`module "stateful"`}},
		{name: "global by another team", writer: teamB, old: base, new: with("global", "a: 2\n"),
			wantErr: []string{"the global section"}},
		{name: "an unlisted module by anyone", writer: teamB, old: base, new: with("plainEnabled", "false")},
		{name: "unchanged keys need nobody", writer: teamB, old: base, new: base},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ann map[string]string
			if tc.annotated {
				ann = allow
			}
			w := Write{Operation: OpUpdate, Writer: tc.writer, Old: cmJSON(t, tc.old, ann)}
			if tc.deleted {
				w.Operation = OpDelete
			} else {
				w.New = cmJSON(t, tc.new, ann)
			}
			checkGuardErr(t, guardTestGuard().CheckConfigMap(w), tc.wantErr)
		})
	}
}

func checkGuardErr(t *testing.T, err error, want []string) {
	t.Helper()
	if len(want) == 0 {
		if err != nil {
			t.Fatalf("refused: %v", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("allowed, want a refusal with %q", want)
	}
	for _, part := range want {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("refusal %q lacks %q", err, part)
		}
	}
}

func TestReadWriters(t *testing.T) {
	known := func(name string) bool { return name == "cert-manager" }
	for _, tc := range []struct {
		name, content string
		wantErr       string
	}{
		{name: "valid", content: "global: {groups: [admins]}\ncert-manager: {groups: [certs], users: [alice]}\n\"*\": {groups: [admins]}\n"},
		{name: "empty file", content: ""},
		{name: "unknown field", content: "cert-manager: {group: [certs]}\n", wantErr: `unknown field "group"`},
		{name: "no such module", content: "cert-managr: {groups: [certs]}\n", wantErr: `entry "cert-managr": no module of this name`},
		{name: "nobody", content: "cert-manager: {}\n", wantErr: `entry "cert-manager": no groups or users`},
		{name: "not a name", content: "Cert_Manager: {groups: [a]}\n", wantErr: `entry "Cert_Manager": not a module name`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "writers.yaml")
			if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			ws, err := ReadWriters(path, known)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("ReadWriters: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), path)):
				t.Fatalf("ReadWriters error = %v, want one naming %s and %q", err, path, tc.wantErr)
			case tc.wantErr == "" && ws == nil:
				t.Fatal("ReadWriters returned nil Writers for a valid file")
			}
		})
	}
}

func TestWritersAllows(t *testing.T) {
	ws := Writers{"a": {Groups: []string{"g"}}, AnyModule: {Users: []string{"root"}}}
	for _, tc := range []struct {
		module string
		w      Writer
		want   bool
	}{
		{"a", Writer{Name: "x", Groups: []string{"g"}}, true},
		{"a", Writer{Name: "root"}, false},
		{"b", Writer{Name: "root"}, true},
		{"b", Writer{Name: "x", Groups: []string{"g"}}, false},
	} {
		if got := ws.Allows(tc.module, tc.w); got != tc.want {
			t.Errorf("Allows(%s, %+v) = %v, want %v", tc.module, tc.w, got, tc.want)
		}
	}
	if !(Writers{"a": {Groups: []string{"g"}}}).Allows("b", Writer{Name: "x"}) {
		t.Error("a module without an entry and no \"*\" is not open to everyone")
	}
}
