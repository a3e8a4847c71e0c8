package helm

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/addon-operator/addon-operator/pkg/helm/revisions"
)

// TestHistoryAndRollback installs, changes values, rolls back and reads the
// history: each revision's reason, and the rollback's values checksum is
// its target's.
func TestHistoryAndRollback(t *testing.T) {
	env := newTestEnv(t)
	ctx := t.Context()
	dir := echoChart(t, "x")
	if _, err := env.client.History(ctx, "echo"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("history of no release: %v, want ErrNotFound", err)
	}
	for _, g := range []string{"hello", "bye"} {
		if _, err := env.client.Apply(ctx, echoRelease(dir, g)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := env.client.Rollback(ctx, "echo", 2); !errors.Is(err, ErrRollbackTarget) {
		t.Errorf("rollback to the last revision: %v, want ErrRollbackTarget", err)
	}
	if _, err := env.client.Rollback(ctx, "echo", 7); !errors.Is(err, ErrRollbackTarget) {
		t.Errorf("rollback to a revision that does not exist: %v, want ErrRollbackTarget", err)
	}
	rb, err := env.client.Rollback(ctx, "echo", 0)
	if err != nil {
		t.Fatal(err)
	}
	revs, err := env.client.History(ctx, "echo")
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Revision      int
		Status        string
		Reason        string
		Description   string
		SameValuesAs1 bool
	}
	got := make([]row, 0, len(revs))
	for _, r := range revs {
		got = append(got, row{r.Revision, r.Status, r.Reason, r.Description, r.ValuesChecksum == revs[0].ValuesChecksum})
		if r.Chart != "echo-0.1.0" {
			t.Errorf("revision %d chart %q, want echo-0.1.0 (no Chart.yaml: version 0.1.0)", r.Revision, r.Chart)
		}
	}
	want := []row{
		{1, "superseded", revisions.ReasonInstall, "Install complete", true},
		{2, "superseded", revisions.ReasonValuesChange, "Upgrade complete", false},
		{3, "deployed", revisions.ReasonRollback, "Rollback to 1", true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}
	if rb.Revision != 3 || rb.Reason != revisions.ReasonRollback {
		t.Errorf("rollback returned revision %d (%s), want 3 (rollback)", rb.Revision, rb.Reason)
	}
	if revs[2].ManifestChecksum != revs[0].ManifestChecksum {
		t.Error("the rollback did not take its target's manifest checksum: the operator would not upgrade again")
	}
}
