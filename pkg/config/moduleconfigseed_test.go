package config

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	v1 "github.com/addon-operator/addon-operator/pkg/apis/v1alpha1"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// runSeededSource runs a ModuleConfigSource over objs with last as the
// configuration saved before the start, and returns its events and the
// status messages it wrote.
func runSeededSource(t *testing.T, last *Config, objs ...runtime.Object) (<-chan Event, *statusLog, *fake.FakeDynamicClient) {
	t.Helper()
	dyn := fake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{v1.ModuleConfigsResource(): "ModuleConfigList"}, objs...)
	statuses := &statusLog{msgs: map[string]string{}}
	dyn.PrependReactor("patch", "moduleconfigs", func(a k8stesting.Action) (bool, runtime.Object, error) {
		p := a.(k8stesting.PatchAction)
		var mc v1.ModuleConfig
		_ = json.Unmarshal(p.GetPatch(), &mc)
		statuses.mu.Lock()
		statuses.msgs[p.GetName()] = mc.Status.Message
		statuses.mu.Unlock()
		return true, mcObject(p.GetName(), 1, nil), nil
	})
	src := NewModuleConfigSource(ModuleConfigOptions{
		Dynamic: dyn, LastApplied: last,
		Known: func(name string) bool { return name == "echo" },
		Validate: func(c *Config) (map[string]error, error) {
			if g, ok := c.Modules["echo"]["greeting"]; ok {
				if _, ok := g.(string); !ok {
					return map[string]error{"echo": errors.New("greeting must be a string")}, nil
				}
			}
			return nil, nil
		},
	})
	events := src.Events()
	go func() { _ = src.Run(t.Context()) }()
	return events, statuses, dyn
}

func nextEvent(t *testing.T, events <-chan Event) Event {
	t.Helper()
	select {
	case ev := <-events:
		return ev
	case <-time.After(30 * time.Second):
		t.Fatal("no event within 30s")
	}
	return Event{}
}

// An object made invalid while the operator was stopped keeps its part of
// the configuration saved before the start, and its status says so; a
// later reading does not take from the saved one again.
func TestModuleConfigSourceKeepsTheSavedSpecOfAnInvalidObject(t *testing.T) {
	last := &Config{Global: values.Values{"clusterName": "prod"}, Modules: map[string]values.Values{"echo": {"greeting": "saved"}},
		Enabled: map[string]bool{"echo": true}, Maintenance: map[string]bool{}}
	events, statuses, dyn := runSeededSource(t, last,
		mcObject("echo", 2, map[string]any{"enabled": true, "settings": map[string]any{"greeting": int64(5)}}))
	ev := nextEvent(t, events)
	if got := ev.Config.Modules["echo"]; !cmp.Equal(got, values.Values{"greeting": "saved"}) || !ev.Config.Enabled["echo"] {
		t.Errorf("echo = %v enabled %v, want the saved settings in force", got, ev.Config.Enabled["echo"])
	}
	if len(ev.Config.Global) != 0 {
		t.Errorf("global = %v, want nothing: no global object exists", ev.Config.Global)
	}
	if ev.Absent || !ev.ModuleConfigs {
		t.Errorf("event absent %v moduleconfigs %v, want false, true", ev.Absent, ev.ModuleConfigs)
	}
	if got := statuses.get("echo"); !strings.Contains(got, "the last accepted spec stays in force") {
		t.Errorf("status of echo = %q", got)
	}

	// Deleted and created again invalid: nothing of the saved
	// configuration comes back.
	res := dyn.Resource(v1.ModuleConfigsResource())
	if err := res.Delete(t.Context(), "echo", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if ev := nextEvent(t, events); !ev.Absent || !ev.Config.IsEmpty() {
		t.Errorf("with no object: absent %v config %+v, want absent and empty", ev.Absent, ev.Config)
	}
	bad := mcObject("echo", 1, map[string]any{"enabled": true, "settings": map[string]any{"greeting": int64(6)}})
	bad.SetUID("uid-echo-2")
	if _, err := res.Create(t.Context(), bad, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if ev := nextEvent(t, events); !ev.Config.IsEmpty() {
		t.Errorf("recreated invalid: config %+v, want empty", ev.Config)
	}
}

func TestModuleConfigSourceConfirmation(t *testing.T) {
	global := mcObject("global", 1, nil)
	global.SetAnnotations(map[string]string{ConfirmEmptyAnnotation: "true"})
	events, _, _ := runSeededSource(t, nil, global)
	ev := nextEvent(t, events)
	if ev.Absent || !ev.Confirmed || !ev.Config.IsEmpty() {
		t.Errorf("event absent %v confirmed %v empty %v, want false, true, true", ev.Absent, ev.Confirmed, ev.Config.IsEmpty())
	}
}
