package operator

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/hook/operation"
)

type recordingPatcher struct {
	applied []operation.Operation
	err     error
}

func (p *recordingPatcher) Apply(_ context.Context, ops []operation.Operation) error {
	p.applied = append(p.applied, ops...)
	return p.err
}

func TestFailedHookAppliesOnlyStatusUpdatesMarkedIgnoreHookError(t *testing.T) {
	patch := strings.Join([]string{
		`{"operation":"MergePatch","apiVersion":"deckhouse.io/v1alpha1","kind":"Module","name":"m","subresource":"/status","mergePatch":{"status":{"phase":"Reconciling"}},"ignoreHookError":true}`,
		`{"operation":"MergePatch","apiVersion":"v1","kind":"ConfigMap","name":"c","mergePatch":{"data":{"a":"b"}},"ignoreHookError":true}`,
		`{"operation":"MergePatch","apiVersion":"v1","kind":"ConfigMap","name":"c","subresource":"status","mergePatch":{"status":{}}}`,
	}, "\n")
	runErr := errors.New("exit code 1")
	p := &recordingPatcher{}
	o := &Operator{patcher: p, log: slog.New(slog.DiscardHandler)}
	err := o.applyOnHookError(t.Context(), &hook.Result{KubernetesPatch: []byte(patch)}, runErr)
	if !errors.Is(err, runErr) {
		t.Fatalf("error %v, want the hook's failure", err)
	}
	if len(p.applied) != 1 || p.applied[0].Kind != "Module" || p.applied[0].Subresource != "status" {
		t.Fatalf("applied %+v, want the Module status update alone", p.applied)
	}

	p = &recordingPatcher{err: errors.New("forbidden")}
	o.patcher = p
	err = o.applyOnHookError(t.Context(), &hook.Result{KubernetesPatch: []byte(patch)}, runErr)
	if !errors.Is(err, runErr) || !strings.Contains(err.Error(), "forbidden") {
		t.Fatalf("error %v, want the hook's failure and the patch error", err)
	}

	for _, res := range []*hook.Result{nil, {}} {
		p = &recordingPatcher{}
		o.patcher = p
		if err := o.applyOnHookError(t.Context(), res, runErr); !errors.Is(err, runErr) || len(p.applied) != 0 {
			t.Fatalf("result %+v: error %v, applied %v", res, err, p.applied)
		}
	}
}
