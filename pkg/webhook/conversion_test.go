package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/addon-operator/addon-operator/pkg/hook"
)

func TestChain(t *testing.T) {
	all := steps("things.example.com", []Conversion{
		{Hook: "a", Binding: hook.ConversionBinding{Conversions: []hook.Conversion{{FromVersion: "v1alpha1", ToVersion: "v1beta1"}, {FromVersion: "v1beta1", ToVersion: "v1alpha1"}}}},
		{Hook: "b", Binding: hook.ConversionBinding{Conversions: []hook.Conversion{{FromVersion: "example.com/v1beta1", ToVersion: "v1"}}}},
	})
	path := func(from, to string) []string {
		steps := chain(all, from, to)
		out := make([]string, 0, len(steps))
		for _, s := range steps {
			out = append(out, s.conv.Hook+":"+s.from+">"+s.to)
		}
		if len(out) == 0 {
			return nil
		}
		return out
	}
	tests := []struct {
		from, to string
		want     []string
	}{
		{"example.com/v1alpha1", "example.com/v1", []string{"a:example.com/v1alpha1>example.com/v1beta1", "b:example.com/v1beta1>example.com/v1"}},
		{"example.com/v1beta1", "example.com/v1alpha1", []string{"a:example.com/v1beta1>example.com/v1alpha1"}},
		{"example.com/v1", "example.com/v1alpha1", nil},
		{"example.com/v1", "example.com/v1", nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, path(tt.from, tt.to)); diff != "" {
			t.Errorf("%s -> %s (-want +got):\n%s", tt.from, tt.to, diff)
		}
	}
}

// relabel is a conversion hook that rewrites apiVersion and records the
// steps it took in an annotation-like field.
func relabel(name string, calls *[]string) RunFunc {
	return func(_ context.Context, bc hook.BindingContext) (*hook.Result, error) {
		*calls = append(*calls, name+":"+bc.FromVersion+">"+bc.ToVersion)
		var review apiextensionsv1.ConversionReview
		if err := json.Unmarshal(bc.Review, &review); err != nil {
			return nil, err
		}
		var out []map[string]any
		for _, o := range review.Request.Objects {
			var obj map[string]any
			if err := json.Unmarshal(o.Raw, &obj); err != nil {
				return nil, err
			}
			obj["apiVersion"] = review.Request.DesiredAPIVersion
			obj["path"] = fmt.Sprint(obj["path"], ">", name)
			out = append(out, obj)
		}
		data, err := json.Marshal(map[string]any{"convertedObjects": out})
		return &hook.Result{ConversionResponse: data}, err
	}
}

func TestServeConversionChain(t *testing.T) {
	var calls []string
	s := newTestServer(t, 2)
	crd := "things.example.com"
	must(t, s.reg.set("m1", Entries{Conversion: []Conversion{{Hook: "a", Binding: hook.ConversionBinding{Name: "a", CRDName: crd, Conversions: []hook.Conversion{{FromVersion: "v1alpha1", ToVersion: "v1beta1"}}}, Run: relabel("a", &calls)}}}, false))
	must(t, s.reg.set("m2", Entries{Conversion: []Conversion{{Hook: "b", Binding: hook.ConversionBinding{Name: "b", CRDName: crd, Conversions: []hook.Conversion{{FromVersion: "v1beta1", ToVersion: "v1"}}}, Run: relabel("b", &calls)}}}, false))
	objs := []string{
		`{"apiVersion":"example.com/v1alpha1","path":"1"}`,
		`{"apiVersion":"example.com/v1","path":"2"}`,
		`{"apiVersion":"example.com/v1beta1","path":"3"}`,
	}
	req := &apiextensionsv1.ConversionRequest{UID: "u", DesiredAPIVersion: "example.com/v1"}
	for _, o := range objs {
		req.Objects = append(req.Objects, runtime.RawExtension{Raw: []byte(o)})
	}
	body, _ := json.Marshal(apiextensionsv1.ConversionReview{TypeMeta: metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "ConversionReview"}, Request: req})
	code, out := post(t, s, "/convert/"+crd, body)
	if code != 200 {
		t.Fatalf("status %d: %s", code, out)
	}
	var review apiextensionsv1.ConversionReview
	must(t, json.Unmarshal(out, &review))
	if review.Response.Result.Status != metav1.StatusSuccess {
		t.Fatalf("result %+v", review.Response.Result)
	}
	got := make([]string, 0, len(review.Response.ConvertedObjects))
	for _, o := range review.Response.ConvertedObjects {
		got = append(got, string(o.Raw))
	}
	want := []string{
		`{"apiVersion":"example.com/v1","path":"1\u003ea\u003eb"}`,
		`{"apiVersion":"example.com/v1","path":"2"}`,
		`{"apiVersion":"example.com/v1","path":"3\u003eb"}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("converted objects in request order (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a:example.com/v1alpha1>example.com/v1beta1", "b:example.com/v1beta1>example.com/v1"}, calls); diff != "" {
		t.Errorf("hook runs (-want +got):\n%s", diff)
	}

	req.DesiredAPIVersion = "example.com/v1alpha1"
	body, _ = json.Marshal(apiextensionsv1.ConversionReview{Request: req})
	_, out = post(t, s, "/convert/"+crd, body)
	must(t, json.Unmarshal(out, &review))
	if review.Response.Result.Status != metav1.StatusFailure || !strings.Contains(review.Response.Result.Message, "no declared conversion from example.com/v1 to example.com/v1alpha1") {
		t.Errorf("result %+v, want a failure naming the missing conversion", review.Response.Result)
	}
}

func TestParseConversion(t *testing.T) {
	tests := []struct{ name, data, wantErr string }{
		{"empty", "", "empty response file"},
		{"failed", `{"failedMessage": "cannot"}`, "cannot"},
		{"count", `{"convertedObjects": []}`, "0 objects converted, want 1"},
		{"version", `{"convertedObjects": [{"apiVersion": "x/v2"}]}`, "converted object 0 has apiVersion x/v2, want x/v1"},
	}
	for _, tt := range tests {
		if _, err := parseConversion([]byte(tt.data), 1, "x/v1"); err == nil || err.Error() != tt.wantErr {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.wantErr)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
