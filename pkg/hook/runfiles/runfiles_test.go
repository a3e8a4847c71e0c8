package runfiles

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestListByKind(t *testing.T) {
	envs := func(files []File) []string {
		out := make([]string, len(files))
		for i, f := range files {
			out[i] = f.Env
		}
		return out
	}
	hook := []string{BindingContext, Values, ConfigValues, ValuesPatch, ConfigValuesPatch, KubernetesPatch, Metrics}
	tests := []struct {
		kind Kind
		want []string
	}{
		{Hook, hook},
		{EnabledScript, []string{Values, ConfigValues, EnabledResult, EnabledReason}},
		{Webhook, append(append([]string{}, hook...), AdmissionResp, ConversionResp, ValidatingResp)},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		if d := cmp.Diff(tt.want, envs(List(dir, tt.kind))); d != "" {
			t.Errorf("List(%d) (-want +got):\n%s", tt.kind, d)
		}
	}
	files := List(dir, Webhook)
	if last := files[len(files)-1]; last.Path != filepath.Join(dir, AdmissionResp) {
		t.Errorf("VALIDATING_RESPONSE_PATH is %s, want the file of ADMISSION_RESPONSE_PATH", last.Path)
	}
}

func TestCollectRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	files := List(dir, Hook)
	if err := os.Mkdir(filepath.Join(dir, Metrics), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := Collect(files, 1<<20); err == nil {
		t.Fatal("Collect of a directory as METRICS_PATH succeeded")
	}
}
