package confighealth

import (
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/addon-operator/addon-operator/pkg/status"
)

func conditionTypes(tr *Tracker) []string {
	cs := tr.Conditions()
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.Type)
	}
	return out
}

func TestDeletionAndRejection(t *testing.T) {
	tr := New(Options{Namespace: "ns", Name: "cm", KeepDeleted: true, Clock: clocktesting.NewFakeClock(time.Now()), Logger: slog.New(slog.DiscardHandler)})
	if tr.KeepsDeleted() {
		t.Error("a ConfigMap never seen keeps nothing")
	}
	if seen, missing := tr.Observe(true, true); seen || missing {
		t.Errorf("first sight: seen %v, missing %v; want neither", seen, missing)
	}
	tr.Reject(errors.New("bad"), false)
	tr.SkipSections(map[string]error{"a": errors.New("bad section")})
	if diff := cmp.Diff([]string{status.ConditionConfigMapInvalid}, conditionTypes(tr)); diff != "" {
		t.Errorf("conditions after a rejection (-want +got):\n%s", diff)
	}
	if tr.SectionErr("a") == nil || tr.SectionErr("b") != nil {
		t.Errorf("skipped sections: a %v, b %v; want only a", tr.SectionErr("a"), tr.SectionErr("b"))
	}
	tr.Deleted()
	if !tr.KeepsDeleted() {
		t.Error("a deleted ConfigMap that was seen keeps its configuration")
	}
	if diff := cmp.Diff([]string{status.ConditionConfigMapMissing}, conditionTypes(tr)); diff != "" {
		t.Errorf("conditions after the deletion (-want +got):\n%s", diff)
	}
	if !tr.FirstPatchKept() || tr.FirstPatchKept() {
		t.Error("only the first patch kept in memory is the first")
	}
	if _, missing := tr.Observe(true, true); !missing {
		t.Error("a recreated ConfigMap was missing until now")
	}
	if diff := cmp.Diff([]string{}, conditionTypes(tr)); diff != "" {
		t.Errorf("conditions once recreated (-want +got):\n%s", diff)
	}
}
