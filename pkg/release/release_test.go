package release

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"k8s.io/utils/clock"

	"github.com/addon-operator/addon-operator/pkg/helm"
)

// fakeReleases answers Status from a map; a release not in it is not found.
type fakeReleases struct {
	status map[string]helm.Status
	err    error
}

func (*fakeReleases) Apply(context.Context, helm.Release) (helm.Outcome, error) {
	return helm.Outcome{}, nil
}
func (*fakeReleases) Uninstall(context.Context, string) (bool, error)  { return true, nil }
func (*fakeReleases) Owned(context.Context) ([]string, error)          { return nil, nil }
func (*fakeReleases) ClaimUnlabeled(context.Context) ([]string, error) { return nil, nil }
func (f *fakeReleases) Status(_ context.Context, name string) (helm.Status, error) {
	if f.err != nil {
		return helm.Status{}, f.err
	}
	if st, ok := f.status[name]; ok {
		return st, nil
	}
	return helm.Status{}, helm.ErrNotFound
}

func TestExistsOnlyForReleasesOfOurs(t *testing.T) {
	tests := []struct {
		name    string
		rel     *fakeReleases
		want    bool
		wantErr bool
	}{
		{name: "ours", rel: &fakeReleases{status: map[string]helm.Status{"a": {Revision: 1, Owned: true}}}, want: true},
		{name: "someone else's", rel: &fakeReleases{status: map[string]helm.Status{"a": {Revision: 1}}}},
		{name: "none", rel: &fakeReleases{}},
		{name: "status fails", rel: &fakeReleases{err: errors.New("timeout")}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := New(Options{Releases: tt.rel, Clock: clock.RealClock{}, Logger: slog.New(slog.DiscardHandler)})
			got, err := r.Exists(t.Context(), "a")
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("Exists = %v, %v; want %v, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}
