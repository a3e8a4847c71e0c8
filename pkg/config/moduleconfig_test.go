package config

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	v1 "github.com/addon-operator/addon-operator/pkg/apis/v1alpha1"
	"github.com/addon-operator/addon-operator/pkg/values"
)

func mcObject(name string, gen int64, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1.APIVersion, "kind": v1.KindModuleConfig,
		"metadata": map[string]any{"name": name, "uid": "uid-" + name, "generation": gen},
		"spec":     spec,
	}}
}

// statusLog keeps the last status message applied per object.
type statusLog struct {
	mu   sync.Mutex
	msgs map[string]string
}

func (l *statusLog) get(name string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.msgs[name]
}

// TestModuleConfigSource checks the configuration built from objects: a
// valid module object gives its section and flag, global its section; an
// invalid or unknown one is left out and its status says why; a fix takes
// the object into use; a rejected change keeps the last accepted spec.
func TestModuleConfigSource(t *testing.T) {
	dyn := fake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{v1.ModuleConfigsResource(): "ModuleConfigList"},
		mcObject("global", 1, map[string]any{"settings": map[string]any{"clusterName": "prod"}}),
		mcObject("echo", 1, map[string]any{"enabled": true, "settings": map[string]any{"greeting": "hi"}}),
		mcObject("bad", 1, map[string]any{"enabled": true, "settings": map[string]any{"greeting": int64(5)}}),
		mcObject("nope", 1, map[string]any{"enabled": true}),
	)
	statuses := &statusLog{msgs: map[string]string{}}
	dyn.PrependReactor("patch", "moduleconfigs", func(a k8stesting.Action) (bool, runtime.Object, error) {
		p := a.(k8stesting.PatchAction)
		var mc v1.ModuleConfig
		if err := json.Unmarshal(p.GetPatch(), &mc); err != nil || p.GetSubresource() != "status" || p.GetPatchType() != types.ApplyPatchType {
			t.Errorf("patch of %s: %s %s %v", p.GetName(), p.GetSubresource(), p.GetPatchType(), err)
		}
		statuses.mu.Lock()
		statuses.msgs[p.GetName()] = mc.Status.Message
		statuses.mu.Unlock()
		return true, mcObject(p.GetName(), 1, nil), nil
	})
	src := NewModuleConfigSource(ModuleConfigOptions{
		Dynamic: dyn,
		Known:   func(name string) bool { return name == "echo" || name == "bad" },
		Validate: func(c *Config) (map[string]error, error) {
			errs := map[string]error{}
			for key, s := range c.Modules {
				if _, ok := s["greeting"].(string); !ok && s["greeting"] != nil {
					errs[strings.ToLower(key)] = errors.New("greeting must be a string")
				}
			}
			return errs, nil
		},
	})
	events := src.Events()
	go func() { _ = src.Run(t.Context()) }()
	next := func() Event {
		t.Helper()
		select {
		case ev := <-events:
			return ev
		case <-time.After(30 * time.Second):
			t.Fatal("no event within 30s")
		}
		return Event{}
	}

	ev := next()
	want := &Config{
		Global:  values.Values{"clusterName": "prod"},
		Modules: map[string]values.Values{"echo": {"greeting": "hi"}},
		Enabled: map[string]bool{"echo": true},
	}
	if diff := cmp.Diff(want, ev.Config, cmpopts.EquateEmpty()); diff != "" || ev.Err != nil || ev.Absent {
		t.Errorf("first config (-want +got):\n%s (err %v, absent %v)", diff, ev.Err, ev.Absent)
	}
	for name, part := range map[string]string{"echo": "in use", "global": "in use", "bad": "greeting must be a string", "nope": "no module named nope"} {
		if got := statuses.get(name); !strings.Contains(got, part) {
			t.Errorf("status of %s = %q, want it to contain %q", name, got, part)
		}
	}

	// Fixed: bad comes into use.
	res := dyn.Resource(v1.ModuleConfigsResource())
	if _, err := res.Update(t.Context(), mcObject("bad", 2, map[string]any{"enabled": true, "settings": map[string]any{"greeting": "ok"}}), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	ev = next()
	if got := ev.Config.Modules["bad"]; !cmp.Equal(got, values.Values{"greeting": "ok"}) || !ev.Config.Enabled["bad"] {
		t.Errorf("after the fix bad = %v enabled %v", got, ev.Config.Enabled["bad"])
	}
	// Broken again: the last accepted spec stays in force.
	if _, err := res.Update(t.Context(), mcObject("bad", 3, map[string]any{"enabled": false, "settings": map[string]any{"greeting": int64(7)}}), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	ev = next()
	if got := ev.Config.Modules["bad"]; !cmp.Equal(got, values.Values{"greeting": "ok"}) || !ev.Config.Enabled["bad"] {
		t.Errorf("after a rejected change bad = %v enabled %v, want the accepted spec", got, ev.Config.Enabled["bad"])
	}
	if got := statuses.get("bad"); !strings.Contains(got, "the last accepted spec stays in force") {
		t.Errorf("status of bad = %q", got)
	}
}

// TestModuleConfigWrite writes hooks' config patches into the objects:
// settings and enabled of an existing object, a new object for a module
// without one, other fields untouched.
func TestModuleConfigWrite(t *testing.T) {
	dyn := fake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{v1.ModuleConfigsResource(): "ModuleConfigList"},
		mcObject("echo", 1, map[string]any{"enabled": true, "version": int64(2), "settings": map[string]any{"greeting": "hi"}}),
	)
	src := NewModuleConfigSource(ModuleConfigOptions{Dynamic: dyn})
	off := false
	err := src.Write(t.Context(), Edit{
		Sections: map[string]values.Values{"echo": {"greeting": "patched", "replicas": 2}, GlobalKey: {"x": true}},
		Enabled:  map[string]*bool{"freshModule": &off},
	})
	if err != nil {
		t.Fatal(err)
	}
	spec := func(name string) map[string]any {
		u, err := dyn.Resource(v1.ModuleConfigsResource()).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get %s: %v", name, err)
		}
		s, _, _ := unstructured.NestedMap(u.Object, "spec")
		return s
	}
	wants := map[string]map[string]any{
		"echo":         {"enabled": true, "version": int64(2), "settings": map[string]any{"greeting": "patched", "replicas": int64(2)}},
		"global":       {"settings": map[string]any{"x": true}},
		"fresh-module": {"enabled": false},
	}
	for name, want := range wants {
		if diff := cmp.Diff(want, spec(name)); diff != "" {
			t.Errorf("spec of %s (-want +got):\n%s", name, diff)
		}
	}
	if err := src.Write(t.Context(), Edit{Sections: map[string]values.Values{"not-a-key": {}}}); err == nil {
		t.Error("Write of a key that is no module key: nil error")
	}
}

// TestCheckModuleConfig checks the admission check of one object: it
// refuses what the source would not put in use, naming the field.
func TestCheckModuleConfig(t *testing.T) {
	known := func(m string) bool { return m == "echo" }
	validate := func(c *Config) (map[string]error, error) {
		if g, ok := c.Modules["echo"]["greeting"]; ok {
			if _, isString := g.(string); !isString {
				return map[string]error{"echo": errors.New("greeting: expected string")}, nil
			}
		}
		return nil, nil
	}
	tests := []struct {
		name    string
		spec    map[string]any
		object  string
		wantErr string
	}{
		{name: "valid", object: "echo", spec: map[string]any{"enabled": true, "settings": map[string]any{"greeting": "hi"}}},
		{name: "global", object: "global", spec: map[string]any{"settings": map[string]any{"a": int64(1)}}},
		{name: "schema violation", object: "echo", spec: map[string]any{"settings": map[string]any{"greeting": int64(5)}},
			wantErr: "spec.settings: greeting: expected string"},
		{name: "unknown module", object: "echoo", spec: map[string]any{"enabled": true}, wantErr: `metadata.name: "echoo": no module of this name`},
		{name: "global cannot be disabled", object: "global", spec: map[string]any{"enabled": false}, wantErr: "spec.enabled"},
		{name: "unknown maintenance mode", object: "echo", spec: map[string]any{"maintenance": "Frozen"}, wantErr: "spec.maintenance"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := json.Marshal(mcObject(tt.object, 1, tt.spec).Object)
			if err != nil {
				t.Fatal(err)
			}
			err = CheckModuleConfig(raw, known, validate)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("err = %v, want none", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("err = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}
