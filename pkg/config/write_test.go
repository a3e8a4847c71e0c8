package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/addon-operator/addon-operator/pkg/values"
)

func TestEncodeSectionRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		in   values.Values
	}{
		{name: "empty", in: values.Values{}},
		{name: "scalars", in: values.Values{"s": "text", "n": float64(3), "f": 1.5, "b": true, "null": nil}},
		{name: "strings that look like other types", in: values.Values{
			"t": "true", "n": "123", "e": "", "y": "yes", "nul": "null", "colon": "a: b", "hash": "# no",
		}},
		{name: "multi-line string", in: values.Values{"pem": "-----BEGIN-----\nabc\n-----END-----\n"}},
		{name: "nested", in: values.Values{
			"issuer": map[string]any{"name": "le", "solvers": []any{map[string]any{"http01": map[string]any{}}}},
			"list":   []any{float64(1), "two", []any{}, nil},
		}},
		{name: "keys needing quotes", in: values.Values{"a.b": 1.0, "with space": "x", "-dash": "y", "": "empty key"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, err := encodeSection(tt.in)
			if err != nil {
				t.Fatalf("encodeSection() error = %v", err)
			}
			again, err := encodeSection(tt.in.DeepCopy())
			if err != nil || again != text {
				t.Errorf("encodeSection() is not stable: %q then %q (%v)", text, again, err)
			}
			got, err := values.FromYAML([]byte(text))
			if err != nil {
				t.Fatalf("FromYAML(%q) error = %v", text, err)
			}
			if diff := cmp.Diff(tt.in, got); diff != "" {
				t.Errorf("round trip through %q mismatch (-want +got):\n%s", text, diff)
			}
		})
	}
}

func TestEncodeSectionSortsKeys(t *testing.T) {
	got, err := encodeSection(values.Values{"zeta": 1, "alpha": map[string]any{"z": true, "a": false}, "mid": "x"})
	if err != nil {
		t.Fatal(err)
	}
	want := "alpha:\n  a: false\n  z: true\nmid: x\nzeta: 1\n"
	if got != want {
		t.Errorf("encodeSection() = %q, want %q", got, want)
	}
}

func TestEditEncode(t *testing.T) {
	on, off := true, false
	got, err := Edit{
		Sections: map[string]values.Values{"global": {"a": 1}, "certManager": nil, "foo": {}},
		Enabled:  map[string]*bool{"certManager": &on, "foo": &off, "bar": nil},
	}.encode()
	if err != nil {
		t.Fatalf("encode() error = %v", err)
	}
	want := map[string]*string{
		"global": new("a: 1\n"), "certManager": nil, "foo": new("{}\n"),
		"certManagerEnabled": new("true"), "fooEnabled": new("false"), "barEnabled": nil,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("encode() mismatch (-want +got):\n%s", diff)
	}
}

func TestEditEncodeRejectsBadKeys(t *testing.T) {
	_, err := Edit{
		Sections: map[string]values.Values{"cert-manager": {}, "ok": {}, "bad": {"c": make(chan int)}},
		Enabled:  map[string]*bool{"global": nil},
	}.encode()
	if err == nil {
		t.Fatal("encode() error = nil, want one per bad key")
	}
	for _, want := range []string{
		`section "bad": encode yaml:`,
		`section "cert-manager": "cert-manager" is not a module key`,
		`enabled flag of "global": "global" is not a module key`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("encode() error = %q, want it to contain %q", err, want)
		}
	}
	if strings.Contains(err.Error(), `"ok"`) {
		t.Errorf("encode() error = %q names a good key", err)
	}
}

func TestApplyOps(t *testing.T) {
	tests := []struct {
		name        string
		data        map[string]string
		ops         map[string]*string
		want        map[string]string
		wantChanged bool
	}{
		{
			name: "sets into nil", data: nil, ops: map[string]*string{"a": new("1")},
			want: map[string]string{"a": "1"}, wantChanged: true,
		},
		{
			name: "keeps keys not given", data: map[string]string{"a": "1", "b": "2"}, ops: map[string]*string{"a": new("3")},
			want: map[string]string{"a": "3", "b": "2"}, wantChanged: true,
		},
		{
			name: "deletes", data: map[string]string{"a": "1", "b": "2"}, ops: map[string]*string{"a": nil},
			want: map[string]string{"b": "2"}, wantChanged: true,
		},
		{
			name: "same value is no change", data: map[string]string{"a": "1"}, ops: map[string]*string{"a": new("1")},
			want: map[string]string{"a": "1"}, wantChanged: false,
		},
		{
			name: "deleting an absent key is no change", data: map[string]string{"a": "1"}, ops: map[string]*string{"b": nil},
			want: map[string]string{"a": "1"}, wantChanged: false,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orig := map[string]string{}
			for k, v := range tt.data {
				orig[k] = v
			}
			got, changed := applyOps(tt.data, tt.ops)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("applyOps() mismatch (-want +got):\n%s", diff)
			}
			if changed != tt.wantChanged {
				t.Errorf("applyOps() changed = %v, want %v", changed, tt.wantChanged)
			}
			if tt.data != nil && !cmp.Equal(orig, tt.data) {
				t.Errorf("applyOps() modified its input: %v, was %v", tt.data, orig)
			}
		})
	}
}

func TestWriteRetriesConflicts(t *testing.T) {
	client := fake.NewClientset(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: DefaultName, Namespace: "ns"},
		Data:       map[string]string{"global": "a: 1\n", "fooEnabled": "true"},
	})
	conflicts := 2
	client.PrependReactor("update", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
		if conflicts == 0 {
			return false, nil, nil
		}
		conflicts--
		return true, nil, apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, DefaultName, errors.New("changed"))
	})
	s := NewSource(client, "ns", "", nil)
	if err := s.Write(t.Context(), Edit{Sections: map[string]values.Values{"foo": {"b": 2}}}); err != nil {
		t.Fatalf("Write() error = %v", err)
	}
	if conflicts != 0 {
		t.Errorf("%d conflicts left, want every one consumed by a retry", conflicts)
	}
	cm, err := client.CoreV1().ConfigMaps("ns").Get(t.Context(), DefaultName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"global": "a: 1\n", "fooEnabled": "true", "foo": "b: 2\n"}
	if diff := cmp.Diff(want, cm.Data); diff != "" {
		t.Errorf("data mismatch (-want +got):\n%s", diff)
	}
}

func TestWriteOnlyDeletingCreatesNothing(t *testing.T) {
	client := fake.NewClientset()
	s := NewSource(client, "ns", "cfg", nil)
	err := s.Write(t.Context(), Edit{Sections: map[string]values.Values{"foo": nil}, Enabled: map[string]*bool{"foo": nil}})
	if err != nil {
		t.Fatalf("Write() error = %v", err)
	}
	_, err = client.CoreV1().ConfigMaps("ns").Get(t.Context(), "cfg", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("Get() after a delete-only Write error = %v, want NotFound", err)
	}
}

func TestWriteNoCreate(t *testing.T) {
	tests := []struct {
		name     string
		existing bool
		wantErr  error
		wantData map[string]string
	}{
		{name: "absent ConfigMap is not created", wantErr: ErrAbsent},
		{name: "existing ConfigMap is updated", existing: true, wantData: map[string]string{"keep": "x", "foo": "a: 1\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := fake.NewClientset()
			if tt.existing {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: "ns"}, Data: map[string]string{"keep": "x"}}
				if _, err := client.CoreV1().ConfigMaps("ns").Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			s := NewSource(client, "ns", "cfg", nil)
			err := s.Write(t.Context(), Edit{Sections: map[string]values.Values{"foo": {"a": 1.0}}, NoCreate: true})
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("Write() error = %v, want %v", err, tt.wantErr)
			}
			cm, err := client.CoreV1().ConfigMaps("ns").Get(t.Context(), "cfg", metav1.GetOptions{})
			if tt.wantData == nil {
				if !apierrors.IsNotFound(err) {
					t.Errorf("Get() after Write = %v, %v; want NotFound", cm, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantData, cm.Data); diff != "" {
				t.Errorf("data (-want +got):\n%s", diff)
			}
		})
	}
}
