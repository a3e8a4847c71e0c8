package hook

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"
)

func raw(s string) json.RawMessage { return json.RawMessage(s) }

func TestBindingContextGolden(t *testing.T) {
	pod := raw(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"pod-321d12","namespace":"default"}}`)
	cm := raw(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"settings"},"data":{"a":"b"}}`)
	snapshots := map[string][]FilteredObject{
		"configmap-content": {{Object: cm}},
		"monitor-pods":      {{Object: pod, FilterResult: raw(`{"app":"web"}`)}},
	}
	tests := []struct {
		name     string
		contexts []BindingContext
	}{
		{name: "none", contexts: nil},
		{name: "on-startup", contexts: []BindingContext{{Binding: string(OnStartup)}}},
		{name: "before-helm-snapshots", contexts: []BindingContext{{Binding: string(BeforeHelm), Snapshots: snapshots}}},
		{name: "after-all-empty-snapshots", contexts: []BindingContext{
			{Binding: string(AfterAll), Snapshots: map[string][]FilteredObject{"monitor-pods": nil}},
		}},
		{name: "schedule", contexts: []BindingContext{{Binding: "incremental", Type: TypeSchedule}}},
		{name: "schedule-snapshots-requested-empty", contexts: []BindingContext{
			{Binding: "periodic", Type: TypeSchedule, Snapshots: map[string][]FilteredObject{}},
		}},
		{name: "synchronization-empty", contexts: []BindingContext{{Binding: "kubernetes", Type: TypeSynchronization}}},
		{name: "synchronization-objects-snapshots", contexts: []BindingContext{{
			Binding: "monitor-pods", Type: TypeSynchronization,
			Objects:   []FilteredObject{{Object: pod, FilterResult: raw(`{"app":"web"}`)}, {FilterResult: raw(`null`)}},
			Snapshots: map[string][]FilteredObject{"configmap-content": {{Object: cm}}},
		}}},
		{name: "event", contexts: []BindingContext{{
			Binding: "monitor-pods", Type: TypeEvent, WatchEvent: Added,
			Object: pod, FilterResult: raw(`{"app":"web"}`),
			Snapshots: map[string][]FilteredObject{"configmap-content": {{Object: cm}}},
		}}},
		{name: "event-without-object", contexts: []BindingContext{{
			Binding: "monitor-pods", Type: TypeEvent, WatchEvent: Deleted, FilterResult: raw(`"pod-321d12"`),
		}}},
		{name: "group", contexts: []BindingContext{{
			Binding: "monitor-pods", Type: TypeGroup, GroupName: "pods", Snapshots: snapshots,
		}}},
		{name: "combined", contexts: []BindingContext{
			{Binding: "monitor-pods", Type: TypeEvent, WatchEvent: Modified, Object: pod},
			{Binding: "monitor-pods", Type: TypeEvent, WatchEvent: Deleted, Object: pod, Objects: []FilteredObject{}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wire, err := MarshalContexts(tt.contexts)
			if err != nil {
				t.Fatal(err)
			}
			// The golden file is indented for review; field order and
			// content are still exactly the wire's.
			var pretty bytes.Buffer
			if err := json.Indent(&pretty, wire, "", "  "); err != nil {
				t.Fatalf("invalid JSON %s: %v", wire, err)
			}
			pretty.WriteByte('\n')
			golden(t, filepath.Join("testdata", "contexts", tt.name+".json"), pretty.Bytes())
		})
	}
}
