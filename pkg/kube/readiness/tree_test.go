package readiness

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestStatuses lists a release's objects with their kstatus: a
// Deployment in progress takes the release's namespace, a missing one is
// NotFound, and a kind the server does not serve is Unknown without
// hiding the others.
func TestStatuses(t *testing.T) {
	c, _ := newChecker(t, deployment(1))
	got, err := c.Statuses(t.Context(), "web", []Object{
		{APIVersion: "apps/v1", Kind: "Deployment", Name: "x"},
		{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "web", Name: "gone"},
		{APIVersion: "example.com/v1", Kind: "Widget", Name: "w"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if got[i].Kind == "Widget" && got[i].Message != "" {
			got[i].Message = "(error)"
		}
	}
	want := []Node{
		{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "web", Name: "x", Status: "InProgress", Message: "Available: 1/3"},
		{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "web", Name: "gone", Status: "NotFound", Message: "not found"},
		{APIVersion: "example.com/v1", Kind: "Widget", Name: "w", Status: "Unknown", Message: "(error)"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
}
