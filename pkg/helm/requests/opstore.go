package requests

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
)

// OperationStore is the release storage of one operation (one Apply or
// Uninstall): Helm's driver, with the answers of its queries kept until
// the operation writes. An install reads the release's history three
// times before it writes anything (Apply's own look at the last revision,
// Helm's check that the name is free, and its pruning of old revisions
// before it creates the first record), each a LIST of the release's
// storage records; the second and third are answered here.
//
// Contracts:
//   - A query is answered from memory only when the same query succeeded
//     (or found nothing) earlier in the operation and the operation has not
//     written since: any Create, Update or Delete, successful or not, drops
//     every answer before it is sent, so Helm always reads its own writes.
//   - Every answer is a copy (decoded anew from its JSON, labels cloned):
//     Helm changes the releases it reads (SetStatus before Update), and a
//     change must not reach another reader through the cache.
//   - Writers other than the operator are not seen between the first query
//     and the next write; pkg/helm's Client is the only writer of its
//     releases, and Helm's Create of a record that appeared meanwhile fails
//     with ErrReleaseExists.
//   - Get and List go to the driver.
//
// It is safe for concurrent use: Helm writes from a goroutine of its own
// that may outlive Apply.
type OperationStore struct {
	driver.Driver

	mu      sync.Mutex
	queries map[string]queryAnswer
}

// queryAnswer is a remembered Query: the releases, or found none.
type queryAnswer struct {
	releases []*release.Release
	none     bool
}

// NewOperationStore returns the storage of one operation over Helm's
// driver d.
func NewOperationStore(d driver.Driver) *OperationStore {
	return &OperationStore{Driver: d, queries: map[string]queryAnswer{}}
}

// Query returns the releases whose storage labels match, from memory when
// the operation asked the same before and wrote nothing since.
func (s *OperationStore) Query(labels map[string]string) ([]*release.Release, error) {
	key := queryKey(labels)
	s.mu.Lock()
	a, ok := s.queries[key]
	s.mu.Unlock()
	if ok {
		if a.none {
			return nil, driver.ErrReleaseNotFound
		}
		return copyReleases(a.releases)
	}
	rels, err := s.Driver.Query(labels)
	switch {
	case errors.Is(err, driver.ErrReleaseNotFound):
		a = queryAnswer{none: true}
	case err != nil:
		return nil, err //nolint:wrapcheck // a driver passes its driver's errors on as they are
	default:
		if a.releases, err = copyReleases(rels); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	s.queries[key] = a
	s.mu.Unlock()
	return rels, err //nolint:wrapcheck // ErrReleaseNotFound as the driver returned it
}

// Create stores a new record, after dropping every remembered answer.
func (s *OperationStore) Create(key string, rel *release.Release) error {
	s.forget()
	return s.Driver.Create(key, rel) //nolint:wrapcheck // as the driver returned it
}

// Update replaces a record, after dropping every remembered answer.
func (s *OperationStore) Update(key string, rel *release.Release) error {
	s.forget()
	return s.Driver.Update(key, rel) //nolint:wrapcheck // as the driver returned it
}

// Delete deletes a record, after dropping every remembered answer.
func (s *OperationStore) Delete(key string) (*release.Release, error) {
	s.forget()
	return s.Driver.Delete(key) //nolint:wrapcheck // as the driver returned it
}

func (s *OperationStore) forget() {
	s.mu.Lock()
	clear(s.queries)
	s.mu.Unlock()
}

// queryKey is labels in a canonical form: "k=v" pairs sorted by key.
func queryKey(labels map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(labels[k])
		b.WriteByte(0)
	}
	return b.String()
}

// copyReleases copies releases the way the driver builds them: decoded
// from JSON, with the labels of the record.
func copyReleases(rels []*release.Release) ([]*release.Release, error) {
	out := make([]*release.Release, 0, len(rels))
	for _, rel := range rels {
		data, err := json.Marshal(rel)
		if err != nil {
			return nil, fmt.Errorf("copy release %q: %w", rel.Name, err)
		}
		c := new(release.Release)
		if err := json.Unmarshal(data, c); err != nil {
			return nil, fmt.Errorf("copy release %q: %w", rel.Name, err)
		}
		c.Labels = maps.Clone(rel.Labels)
		out = append(out, c)
	}
	return out, nil
}
