package binding

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/addon-operator/addon-operator/pkg/hook"
)

// fakeReader answers --config and "hook config" from maps by path.
type fakeReader struct {
	configs map[string]string
	batches map[string]string
}

func (f fakeReader) Config(_ context.Context, path string) ([]byte, error) {
	return []byte(f.configs[path]), nil
}

func (f fakeReader) BatchConfig(_ context.Context, path string) ([]byte, error) {
	if b, ok := f.batches[path]; ok {
		return []byte(b), nil
	}
	return nil, nil
}

func TestLoadBatchBinaries(t *testing.T) {
	t.Parallel()
	r := fakeReader{
		configs: map[string]string{"/m/hooks/a.sh": `{"configVersion":"v1","beforeHelm":2}`},
		batches: map[string]string{"/m/hooks/go": `{"version":"v1","hooks":[` +
			`{"configVersion":"v1","metadata":{"name":"x"},"beforeHelm":1},` +
			`{"configVersion":"v1","metadata":{"name":"y"},"afterHelm":1}],` +
			`"readiness":{"configVersion":"v1","schedule":[{"name":"p","crontab":"* * * * *"}]}}`},
	}
	hooks, err := Load(t.Context(), r, "/m", []string{"/m/hooks/a.sh", "/m/hooks/go"}, hook.Module)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Name string
		Args []string
	}
	got := make([]row, 0, len(hooks))
	for _, h := range hooks {
		got = append(got, row{h.Name, h.Args})
	}
	want := []row{
		{"hooks/a.sh", nil},
		{"hooks/go:x:0", []string{"hook", "run", "0"}},
		{"hooks/go:y:1", []string{"hook", "run", "1"}},
		{"hooks/go:ready", []string{"hook", "ready"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("hooks (-want +got):\n%s", diff)
	}
	order := make([]string, 0, 2)
	for _, h := range ByOrder(hooks, hook.BeforeHelm) {
		order = append(order, h.Name)
	}
	if diff := cmp.Diff([]string{"hooks/go:x:0", "hooks/a.sh"}, order); diff != "" {
		t.Errorf("beforeHelm order (-want +got):\n%s", diff)
	}
}
