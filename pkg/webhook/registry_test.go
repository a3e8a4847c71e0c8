package webhook

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/addon-operator/addon-operator/pkg/hook"
)

func TestRegistryServedAndConfigured(t *testing.T) {
	r := newRegistry()
	adm := func(name string) Entries {
		return Entries{Admission: []Admission{{Hook: "h", Binding: hook.AdmissionBinding{Name: name}}}}
	}
	must(t, r.set("standby", adm("a.example.com"), false))
	must(t, r.set("leader", adm("b.example.com"), true))
	// Serving again after configuring keeps the entries configured.
	must(t, r.set("leader", adm("b.example.com"), false))
	if _, ok := r.admission(false, "a.example.com"); !ok {
		t.Error("serve-only entry not served")
	}
	names := func(skip string) []string {
		admissions, _ := r.snapshotWithout(skip)
		out := make([]string, 0, len(admissions))
		for i := range admissions {
			out = append(out, admissions[i].Binding.Name)
		}
		return out
	}
	if diff := cmp.Diff([]string{"b.example.com"}, names("")); diff != "" {
		t.Errorf("configured entries (-want +got):\n%s", diff)
	}
	if got := names("leader"); len(got) != 0 {
		t.Errorf("entries without leader's: %v, want none", got)
	}
	if err := r.set("other", adm("b.example.com"), true); err == nil {
		t.Error("a second owner took a webhook name already declared")
	}
	r.remove("leader")
	if _, ok := r.admission(false, "b.example.com"); ok {
		t.Error("removed entry still served")
	}
}
