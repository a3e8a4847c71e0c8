package webhook

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestServeWriteGuard: the guard's check sees the operation, the user and
// both objects (none new on DELETE), and its error is the refusal.
func TestServeWriteGuard(t *testing.T) {
	s := newTestServer(t, 1)
	if code, _ := post(t, s, configMapWriteGuardPath, writeGuardReview(t, admissionv1.Delete)); code != 503 {
		t.Errorf("status %d without a guard, want 503", code)
	}
	var seen ConfigWrite
	s = newCheckingServer(t, 1, Checks{WriteGuard: &WriteGuard{
		ModuleConfig: func(ConfigWrite) error { return nil },
		ConfigMap: func(w ConfigWrite) error {
			seen = w
			return errors.New("module \"vault\" needs a confirmation")
		},
	}})
	code, body := post(t, s, configMapWriteGuardPath, writeGuardReview(t, admissionv1.Delete))
	if code != 200 {
		t.Fatalf("status %d: %s", code, body)
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &review); err != nil {
		t.Fatal(err)
	}
	if review.Response.Allowed || review.Response.UID != "uid-g" || review.Response.Result.Message != `module "vault" needs a confirmation` {
		t.Errorf("response %+v, want a denial with the check's error", review.Response)
	}
	want := ConfigWrite{Operation: "DELETE", User: "mallory", Groups: []string{"web"}, Old: []byte(`{"kind":"ConfigMap"}`)}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("write seen by the check (-want +got):\n%s", diff)
	}
	code, body = post(t, s, moduleConfigWriteGuardPath, writeGuardReview(t, admissionv1.Update))
	if err := json.Unmarshal(body, &review); err != nil || code != 200 || !review.Response.Allowed {
		t.Errorf("ModuleConfig write: status %d allowed %v, want allowed", code, review.Response.Allowed)
	}
}

func writeGuardReview(t *testing.T, op admissionv1.Operation) []byte {
	t.Helper()
	data, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: "uid-g", Operation: op, Name: "addon-operator",
			UserInfo:  authenticationv1.UserInfo{Username: "mallory", Groups: []string{"web"}},
			OldObject: runtime.RawExtension{Raw: []byte(`{"kind":"ConfigMap"}`)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestWriteGuardWebhooks: the guard's entries fail closed and see DELETE,
// whatever the failure policy of the other checks.
func TestWriteGuardWebhooks(t *testing.T) {
	opts := DefaultOptions()
	opts.Namespace, opts.ConfigMapName, opts.URL = "ops", "addon-operator", "https://127.0.0.1:9680"
	opts.ConfigMapFailurePolicy = string(admissionregv1.Ignore)
	c := &configurer{opts: opts}
	hooks := c.writeGuardWebhooks(nil)
	if len(hooks) != 2 {
		t.Fatalf("%d entries, want 2", len(hooks))
	}
	for _, w := range hooks {
		if *w.FailurePolicy != admissionregv1.Fail || !slices.Contains(w.Rules[0].Operations, admissionregv1.Delete) {
			t.Errorf("entry %s: failurePolicy %s, operations %v; want Fail with DELETE", w.Name, *w.FailurePolicy, w.Rules[0].Operations)
		}
	}
	if got := hooks[1].MatchConditions[0].Expression; got != `request.name == "addon-operator"` {
		t.Errorf("ConfigMap entry matches %s, want the operator's ConfigMap by request.name (object is null on DELETE)", got)
	}
}
