package helm

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
)

// labels returns a record's labels as Helm's secret driver writes them:
// the release's own (ours when owned) and Helm's name, version, status.
func labels(name string, version int, status string, owned bool) map[string]string {
	l := map[string]string{"owner": "helm", "name": name, "version": strconv.Itoa(version), "status": status}
	if owned {
		l[LabelManagedBy] = ManagedByValue
		l[LabelChecksum] = "sum"
	}
	return l
}

func TestOwnedOf(t *testing.T) {
	tests := []struct {
		name    string
		records []map[string]string
		want    []string
	}{
		{name: "no records", want: []string{}},
		{
			name:    "versions compare as numbers: 10 is newer than 2, and lost the label",
			records: []map[string]string{labels("a", 2, "superseded", true), labels("a", 10, "deployed", false), labels("a", 9, "superseded", true)},
			want:    []string{},
		},
		{
			name:    "versions compare as numbers: 10 is newer than 2, and has the label",
			records: []map[string]string{labels("a", 10, "deployed", true), labels("a", 2, "superseded", false)},
			want:    []string{"a"},
		},
		{
			name:    "the newest record lost our label: not owned",
			records: []map[string]string{labels("a", 1, "superseded", true), labels("a", 2, "deployed", false)},
			want:    []string{},
		},
		{
			name: "every state Helm lists counts, the newest record only",
			records: []map[string]string{
				labels("deployed", 1, "deployed", true), labels("failed", 3, "failed", true),
				labels("uninstalled", 1, "uninstalled", true), labels("uninstalling", 1, "uninstalling", true),
				labels("superseded", 4, "superseded", true), labels("pending-install", 1, "pending-install", true),
				labels("pending-upgrade", 2, "pending-upgrade", true), labels("pending-rollback", 2, "pending-rollback", true),
			},
			want: []string{"deployed", "failed", "pending-install", "pending-rollback", "pending-upgrade", "superseded", "uninstalled", "uninstalling"},
		},
		{
			name:    "an unknown state of the newest record hides the release, as in Helm's list",
			records: []map[string]string{labels("a", 1, "deployed", true), labels("a", 2, "unknown", true), labels("b", 1, "", true)},
			want:    []string{},
		},
		{
			name: "records that are not Helm's are ignored",
			records: []map[string]string{
				{"name": "noversion", LabelManagedBy: ManagedByValue, "status": "deployed"},
				{"name": "badversion", "version": "v1", LabelManagedBy: ManagedByValue, "status": "deployed"},
				{"version": "1", LabelManagedBy: ManagedByValue, "status": "deployed"},
				labels("ok", 1, "deployed", true),
			},
			want: []string{"ok"},
		},
		{
			name:    "sorted, foreign releases left out",
			records: []map[string]string{labels("zeta", 1, "deployed", true), labels("foreign", 1, "deployed", false), labels("alpha", 3, "deployed", true)},
			want:    []string{"alpha", "zeta"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, ownedOf(tt.records)); diff != "" {
				t.Errorf("ownedOf (-want +got):\n%s", diff)
			}
		})
	}
}

// memoryRecords answers RecordLabels from Helm's storage as its secret
// driver would label the records; calls counts them.
type memoryRecords struct {
	store *storage.Storage
	calls atomic.Int32
}

func (m *memoryRecords) RecordLabels(context.Context) ([]map[string]string, error) {
	m.calls.Add(1)
	rels, err := m.store.ListReleases()
	if err != nil {
		return nil, err
	}
	out := make([]map[string]string, 0, len(rels))
	for _, r := range rels {
		l := map[string]string{}
		for k, v := range r.Labels {
			l[k] = v
		}
		for k, v := range labels(r.Name, r.Version, r.Info.Status.String(), false) {
			l[k] = v
		}
		out = append(out, l)
	}
	return out, nil
}

// unsynced is a watch that never lists the records.
type unsynced struct{ calls atomic.Int32 }

func (u *unsynced) RecordLabels(ctx context.Context) ([]map[string]string, error) {
	u.calls.Add(1)
	<-ctx.Done()
	return nil, ctx.Err()
}

// storeRevisions writes release name's revisions, labelled ours per owned
// and in the given states, straight into Helm's storage.
func storeRevisions(t *testing.T, env *testEnv, name string, states []release.Status, owned []bool) {
	t.Helper()
	ch := &chart.Chart{Metadata: &chart.Metadata{APIVersion: chart.APIVersionV2, Name: name, Version: "1.0.0"}}
	for i, state := range states {
		r := &release.Release{Name: name, Namespace: testNamespace, Version: i + 1, Chart: ch, Info: &release.Info{Status: state}}
		if owned[i] {
			r.Labels = map[string]string{LabelManagedBy: ManagedByValue}
		}
		if err := env.store.Create(r); err != nil {
			t.Fatalf("store %s revision %d: %v", name, i+1, err)
		}
	}
}

// TestOwnedFromRecordsMatchesHelmList compares the answer from the records'
// labels with the one of decoding every record through Helm's list.
func TestOwnedFromRecordsMatchesHelmList(t *testing.T) {
	env := newTestEnv(t)
	d, s, f, u := release.StatusDeployed, release.StatusSuperseded, release.StatusFailed, release.StatusUninstalled
	storeRevisions(t, env, "plain", []release.Status{d}, []bool{true})
	storeRevisions(t, env, "ten", []release.Status{s, s, s, s, s, s, s, s, s, d}, []bool{false, true, false, false, false, false, false, false, false, true})
	storeRevisions(t, env, "lost", []release.Status{s, s, d}, []bool{true, true, false})
	storeRevisions(t, env, "failed", []release.Status{s, f}, []bool{true, true})
	storeRevisions(t, env, "gone", []release.Status{s, u}, []bool{true, true})
	storeRevisions(t, env, "pending", []release.Status{d, release.StatusPendingUpgrade}, []bool{true, true})
	storeRevisions(t, env, "unknown", []release.Status{d, release.StatusUnknown}, []bool{true, true})
	storeRevisions(t, env, "foreign", []release.Status{d}, []bool{false})

	decoded, err := env.client.Owned(t.Context())
	if err != nil {
		t.Fatalf("Owned by decoding: %v", err)
	}
	records := &memoryRecords{store: env.store}
	env.client.records = records
	fromLabels, err := env.client.Owned(t.Context())
	if err != nil {
		t.Fatalf("Owned from labels: %v", err)
	}
	if records.calls.Load() != 1 {
		t.Errorf("record reads = %d, want 1", records.calls.Load())
	}
	if diff := cmp.Diff(decoded, fromLabels); diff != "" {
		t.Errorf("owned from labels differs from Helm's list (-decoded +labels):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"failed", "gone", "pending", "plain", "ten"}, fromLabels); diff != "" {
		t.Errorf("owned (-want +got):\n%s", diff)
	}
}

func TestOwnedListsWhenTheWatchIsLate(t *testing.T) {
	env := newTestEnv(t)
	storeRevisions(t, env, "ours", []release.Status{release.StatusDeployed}, []bool{true})
	watch, lister := &unsynced{}, &memoryRecords{store: env.store}
	env.client.records, env.client.lister = watch, lister
	env.client.recordsSyncWait = 50 * time.Millisecond

	owned, err := env.client.Owned(t.Context())
	if err != nil {
		t.Fatalf("Owned: %v", err)
	}
	if diff := cmp.Diff([]string{"ours"}, owned); diff != "" {
		t.Errorf("owned (-want +got):\n%s", diff)
	}
	if watch.calls.Load() != 1 || lister.calls.Load() != 1 {
		t.Errorf("watch reads, lists = %d, %d; want 1, 1", watch.calls.Load(), lister.calls.Load())
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := env.client.Owned(ctx); err == nil {
		t.Error("Owned with a cancelled context succeeded")
	}
}

func TestOwnedListsOnceAfterClaimRelabels(t *testing.T) {
	env := newTestEnv(t)
	installForeign(t, env, "old")
	watch, lister := &memoryRecords{store: env.store}, &memoryRecords{store: env.store}
	env.client.records, env.client.lister = watch, lister
	env.client.adoptReleases = true
	if _, err := env.client.ClaimUnlabeled(t.Context()); err != nil {
		t.Fatalf("ClaimUnlabeled: %v", err)
	}
	for range 2 {
		owned, err := env.client.Owned(t.Context())
		if err != nil {
			t.Fatalf("Owned: %v", err)
		}
		if diff := cmp.Diff([]string{"old"}, owned); diff != "" {
			t.Errorf("owned (-want +got):\n%s", diff)
		}
	}
	if watch.calls.Load() != 1 || lister.calls.Load() != 2 {
		t.Errorf("watch reads, lists = %d, %d; want 1 (second Owned), 2 (the claim, the first Owned after it)", watch.calls.Load(), lister.calls.Load())
	}
}

// frozen is a watch that shows the records as they were when taken.
type frozen struct{ labels []map[string]string }

func (f *frozen) RecordLabels(context.Context) ([]map[string]string, error) { return f.labels, nil }

func TestOwnedConfirmsWhatItUninstalled(t *testing.T) {
	env := newTestEnv(t)
	for _, name := range []string{"gone", "back", "kept"} {
		r := echoRelease(echoChart(t, "one"), "hello")
		r.Name = name
		if _, err := env.client.Apply(t.Context(), r); err != nil {
			t.Fatalf("apply %s: %v", name, err)
		}
	}
	before, err := (&memoryRecords{store: env.store}).RecordLabels(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	watch := &frozen{labels: before}
	env.client.records = watch
	for _, name := range []string{"gone", "back"} {
		if _, err := env.client.Uninstall(t.Context(), name); err != nil {
			t.Fatalf("uninstall %s: %v", name, err)
		}
	}
	r := echoRelease(echoChart(t, "one"), "hello")
	r.Name = "back"
	if _, err := env.client.Apply(t.Context(), r); err != nil {
		t.Fatalf("apply back again: %v", err)
	}

	// The watch has seen none of it: what the Client uninstalled is read.
	for range 2 {
		owned, err := env.client.Owned(t.Context())
		if err != nil {
			t.Fatalf("Owned: %v", err)
		}
		if diff := cmp.Diff([]string{"back", "kept"}, owned); diff != "" {
			t.Errorf("owned with a late watch (-want +got):\n%s", diff)
		}
	}
	if diff := cmp.Diff(map[string]bool{"gone": true}, env.client.uninstalled); diff != "" {
		t.Errorf("releases still to confirm (-want +got):\n%s", diff)
	}

	// The watch catches up: nothing is left to confirm.
	now, err := (&memoryRecords{store: env.store}).RecordLabels(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	watch.labels = now
	owned, err := env.client.Owned(t.Context())
	if err != nil || !cmp.Equal([]string{"back", "kept"}, owned) {
		t.Errorf("Owned = %v, %v; want [back kept]", owned, err)
	}
	if len(env.client.uninstalled) != 0 {
		t.Errorf("releases still to confirm = %v, want none", env.client.uninstalled)
	}
}
