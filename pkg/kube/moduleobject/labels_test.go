package moduleobject

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/addon-operator/addon-operator/pkg/status"
)

func TestDefinitionLabels(t *testing.T) {
	got := DefinitionLabels(true, "General Availability", "cni", []string{"cni", "not a label"}, []string{"network"})
	want := map[string]string{
		CriticalLabel: "true", StageLabel: "general-availability", ExclusiveGroupLabel: "cni",
		TagLabelPrefix + "cni": "", SubsystemLabelPrefix + "network": "",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if got := DefinitionLabels(false, "", "", nil, nil); len(got) != 0 {
		t.Errorf("no fields, labels %v", got)
	}
}

// TestWriterAppliesDefinitionLabels: the object gets the definition
// labels with its own, once; changed labels are applied again without a
// status write.
func TestWriterAppliesDefinitionLabels(t *testing.T) {
	var mu sync.Mutex
	var applied []map[string]string
	r := startRigWith(t, Options{}, func(_ *rig, dyn *fake.FakeDynamicClient) {
		dyn.PrependReactor("patch", "modules", func(a k8stesting.Action) (bool, runtime.Object, error) {
			p := a.(k8stesting.PatchAction)
			if p.GetSubresource() == "" {
				var obj struct {
					Metadata struct {
						Labels map[string]string `json:"labels"`
					} `json:"metadata"`
				}
				_ = json.Unmarshal(p.GetPatch(), &obj)
				mu.Lock()
				applied = append(applied, obj.Metadata.Labels)
				mu.Unlock()
			}
			return false, nil, nil // the fake API's own reactor answers
		})
	})
	r.w.Prune([]string{"a"})
	s := State{Name: "a", Enabled: true, Phase: status.PhaseReady, Labels: DefinitionLabels(true, "Preview", "", nil, nil)}
	r.w.Update(s)
	r.clk.Step(time.Second)
	r.expect("the object and its status", "apply a", "apply a/status Ready")
	r.w.Update(s)
	r.clk.Step(time.Second)
	r.handled(2)
	r.nothingWritten("unchanged labels")
	s.Labels = DefinitionLabels(false, "Preview", "", nil, nil)
	r.w.Update(s)
	r.clk.Step(time.Second)
	r.expect("changed labels", "apply a")
	mu.Lock()
	defer mu.Unlock()
	want := []map[string]string{
		{NamespaceLabel: "ns", "app.kubernetes.io/managed-by": "addon-operator", CriticalLabel: "true", StageLabel: "preview"},
		{NamespaceLabel: "ns", "app.kubernetes.io/managed-by": "addon-operator", StageLabel: "preview"},
	}
	if diff := cmp.Diff(want, applied); diff != "" {
		t.Errorf("applied labels (-want +got):\n%s", diff)
	}
}

func TestWarningsInConditionMessages(t *testing.T) {
	s := State{Name: "a", Enabled: true, By: status.SourceConfigMap, Phase: status.PhaseReady, Warnings: []string{`module.yaml: unknown field "colour" ignored`}}
	st := Compute(s, 1, nil, time.Now())
	if got := st.Conditions[0].Message; got != `enabled by configmap; last run succeeded (warnings: module.yaml: unknown field "colour" ignored)` {
		t.Errorf("message %q", got)
	}
}
