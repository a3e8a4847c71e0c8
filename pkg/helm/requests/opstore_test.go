package requests

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
)

// Labels of the operator's records, as pkg/helm sets them.
const (
	testNamespace  = "addon-operator"
	labelManagedBy = "addon-operator.io/managed-by"
	labelChecksum  = "addon-operator.io/checksum"
	labelCleanup   = "addon-operator.io/cleanup"
)

// countingDriver counts the queries that reach Helm's memory driver and
// fails them while failing is set.
type countingDriver struct {
	*driver.Memory
	queries int
	failing bool
}

func (d *countingDriver) Query(labels map[string]string) ([]*release.Release, error) {
	d.queries++
	if d.failing {
		return nil, errors.New("server unavailable")
	}
	return d.Memory.Query(labels) //nolint:wrapcheck // the memory driver's error as is
}

// testRelease is revision 1 of release echo.
func testRelease(status release.Status) *release.Release {
	return &release.Release{
		Name: "echo", Namespace: testNamespace, Version: 1,
		Info:   &release.Info{Status: status},
		Labels: map[string]string{labelManagedBy: "addon-operator"},
	}
}

// echoQuery is Helm's query of release echo's records.
func echoQuery() map[string]string { return map[string]string{"name": "echo", "owner": "helm"} }

func TestOperationStoreAnswersRepeatedQueriesUntilAWrite(t *testing.T) {
	steps := []struct {
		name        string
		do          func(s *OperationStore) error
		wantQueries int // reaching the driver, in all, after the step
		wantFound   int // releases the step's query returns; -1: none
	}{
		{"first query reads", nil, 1, -1},
		{"same query again is answered", nil, 1, -1},
		{"create drops the answers", func(s *OperationStore) error {
			return s.Create("sh.helm.release.v1.echo.v1", testRelease(release.StatusPendingInstall))
		}, 2, 1},
		{"answered again after the read", nil, 2, 1},
		{"update drops the answers", func(s *OperationStore) error {
			return s.Update("sh.helm.release.v1.echo.v1", testRelease(release.StatusDeployed))
		}, 3, 1},
		{"a failed write drops them too", func(s *OperationStore) error {
			if err := s.Create("sh.helm.release.v1.echo.v1", testRelease(release.StatusDeployed)); !errors.Is(err, driver.ErrReleaseExists) {
				t.Fatalf("create existing record: err = %v, want ErrReleaseExists", err)
			}
			return nil
		}, 4, 1},
		{"delete drops them", func(s *OperationStore) error {
			_, err := s.Delete("sh.helm.release.v1.echo.v1")
			return err
		}, 5, -1},
	}
	mem := &countingDriver{Memory: driver.NewMemory()}
	mem.SetNamespace(testNamespace)
	s := NewOperationStore(mem)
	for _, step := range steps {
		if step.do != nil {
			if err := step.do(s); err != nil {
				t.Fatalf("%s: %v", step.name, err)
			}
		}
		rels, err := s.Query(echoQuery())
		found := len(rels)
		if errors.Is(err, driver.ErrReleaseNotFound) {
			found = -1
		} else if err != nil {
			t.Fatalf("%s: query: %v", step.name, err)
		}
		if found != step.wantFound || mem.queries != step.wantQueries {
			t.Errorf("%s: found %d releases with %d queries sent, want %d with %d", step.name, found, mem.queries, step.wantFound, step.wantQueries)
		}
	}
	if _, err := s.Query(map[string]string{"name": "other", "owner": "helm"}); !errors.Is(err, driver.ErrReleaseNotFound) || mem.queries != 6 {
		t.Errorf("another query: err = %v after %d queries, want ErrReleaseNotFound from the driver (6)", err, mem.queries)
	}
}

func TestOperationStoreAnswersCopies(t *testing.T) {
	mem := &countingDriver{Memory: driver.NewMemory()}
	mem.SetNamespace(testNamespace)
	if err := mem.Create("sh.helm.release.v1.echo.v1", testRelease(release.StatusDeployed)); err != nil {
		t.Fatal(err)
	}
	s := NewOperationStore(mem)
	first, err := s.Query(echoQuery())
	if err != nil {
		t.Fatal(err)
	}
	// What Helm does to a release it read before it writes it back.
	first[0].SetStatus(release.StatusSuperseded, "changed by a reader")
	first[0].Labels[labelChecksum] = "changed"
	second, err := s.Query(echoQuery())
	if err != nil {
		t.Fatal(err)
	}
	second[0].Labels[labelCleanup] = "1-2"
	third, err := s.Query(echoQuery())
	if err != nil {
		t.Fatal(err)
	}
	want := testRelease(release.StatusDeployed)
	for i, got := range [][]*release.Release{second, third} {
		g := *got[0]
		if i == 0 {
			delete(g.Labels, labelCleanup) // the change made after the read
		}
		if g.Info.Status != want.Info.Status || g.Info.Description != "" || !cmp.Equal(g.Labels, want.Labels) {
			t.Errorf("answer %d = status %s %q labels %v, want the record as stored: %s, labels %v", i+2, g.Info.Status, g.Info.Description, g.Labels, want.Info.Status, want.Labels)
		}
	}
	if mem.queries != 1 {
		t.Errorf("queries sent = %d, want 1", mem.queries)
	}
}

func TestOperationStoreDoesNotKeepErrors(t *testing.T) {
	mem := &countingDriver{Memory: driver.NewMemory(), failing: true}
	s := NewOperationStore(mem)
	if _, err := s.Query(echoQuery()); err == nil {
		t.Fatal("query of a failing driver: no error")
	}
	mem.failing = false
	if _, err := s.Query(echoQuery()); !errors.Is(err, driver.ErrReleaseNotFound) || mem.queries != 2 {
		t.Errorf("query after a failure: err = %v with %d queries sent, want ErrReleaseNotFound from the driver (2 queries)", err, mem.queries)
	}
}
