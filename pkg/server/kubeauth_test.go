package server

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"
)

// reviewAPI answers TokenReviews and SubjectAccessReviews as an API server
// would, from fixed tables, and counts them.
type reviewAPI struct {
	users   map[string]authenticationv1.UserInfo // token -> user
	allowed map[string]string                    // user -> the one path they may get
	err     error
	tokens  int
	grants  []authorizationv1.SubjectAccessReviewSpec
}

func (a *reviewAPI) client() *fake.Clientset {
	c := fake.NewClientset()
	c.PrependReactor("create", "tokenreviews", func(action k8stesting.Action) (bool, runtime.Object, error) {
		a.tokens++
		if a.err != nil {
			return true, nil, a.err
		}
		review := action.(k8stesting.CreateAction).GetObject().(*authenticationv1.TokenReview) //nolint:forcetypeassert // the reactor's resource
		u, ok := a.users[review.Spec.Token]
		review.Status = authenticationv1.TokenReviewStatus{Authenticated: ok, User: u}
		return true, review, nil
	})
	c.PrependReactor("create", "subjectaccessreviews", func(action k8stesting.Action) (bool, runtime.Object, error) {
		review := action.(k8stesting.CreateAction).GetObject().(*authorizationv1.SubjectAccessReview) //nolint:forcetypeassert // the reactor's resource
		a.grants = append(a.grants, review.Spec)
		if a.err != nil {
			return true, nil, a.err
		}
		allowed := a.allowed[review.Spec.User] == review.Spec.NonResourceAttributes.Path
		review.Status = authorizationv1.SubjectAccessReviewStatus{Allowed: allowed}
		if !allowed {
			review.Status.Reason = "no RBAC rule"
		}
		return true, review, nil
	})
	return c
}

func TestKubeAuth(t *testing.T) {
	reader := authenticationv1.UserInfo{
		Username: "system:serviceaccount:ops:reader", UID: "u1", Groups: []string{"system:serviceaccounts"},
		Extra: map[string]authenticationv1.ExtraValue{"authentication.kubernetes.io/pod-name": {"p"}},
	}
	api := &reviewAPI{users: map[string]authenticationv1.UserInfo{"t1": reader}, allowed: map[string]string{reader.Username: "/debug/queues"}}
	clk := clocktesting.NewFakeClock(time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC))
	auth := NewKubeAuth(api.client(), clk)
	ctx := t.Context()

	u, ok, err := auth.Authenticate(ctx, "t1")
	wantUser := User{Name: reader.Username, UID: "u1", Groups: []string{"system:serviceaccounts"},
		Extra: map[string][]string{"authentication.kubernetes.io/pod-name": {"p"}}}
	if err != nil || !ok || !cmp.Equal(wantUser, u) {
		t.Fatalf("Authenticate(t1) = %+v, %t, %v; want %+v", u, ok, err, wantUser)
	}
	if _, ok, err := auth.Authenticate(ctx, "forged"); ok || err != nil {
		t.Errorf("Authenticate(forged) = %t, %v; want not valid, no error", ok, err)
	}
	if allowed, _, err := auth.Authorize(ctx, u, "/debug/queues"); !allowed || err != nil {
		t.Errorf("Authorize(/debug/queues) = %t, %v; want allowed", allowed, err)
	}
	if allowed, reason, err := auth.Authorize(ctx, u, "/debug/global/values"); allowed || reason != "no RBAC rule" || err != nil {
		t.Errorf("Authorize(/debug/global/values) = %t, %q, %v; want denied with the reason", allowed, reason, err)
	}
	wantSpec := authorizationv1.SubjectAccessReviewSpec{
		User: reader.Username, UID: "u1", Groups: []string{"system:serviceaccounts"},
		Extra:                 map[string]authorizationv1.ExtraValue{"authentication.kubernetes.io/pod-name": {"p"}},
		NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/debug/queues", Verb: "get"},
	}
	if diff := cmp.Diff(wantSpec, api.grants[0]); diff != "" {
		t.Errorf("SubjectAccessReview spec (-want +got):\n%s", diff)
	}

	// Answers are cached, valid and not, allowed and denied ...
	for range 3 {
		_, _, _ = auth.Authenticate(ctx, "t1")
		_, _, _ = auth.Authenticate(ctx, "forged")
		_, _, _ = auth.Authorize(ctx, u, "/debug/queues")
		_, _, _ = auth.Authorize(ctx, u, "/debug/global/values")
	}
	if api.tokens != 2 || len(api.grants) != 2 {
		t.Errorf("within the TTL: %d token reviews and %d access reviews, want 2 and 2", api.tokens, len(api.grants))
	}
	// ... until they expire; errors are not cached.
	clk.Step(ReviewCacheTTL + time.Second)
	api.err = errors.New("connection refused")
	if _, _, err := auth.Authenticate(ctx, "t1"); err == nil {
		t.Error("Authenticate during an outage: no error")
	}
	if _, _, err := auth.Authorize(ctx, u, "/debug/queues"); err == nil {
		t.Error("Authorize during an outage: no error")
	}
	api.err = nil
	if _, ok, err := auth.Authenticate(ctx, "t1"); !ok || err != nil {
		t.Errorf("Authenticate after the outage = %t, %v", ok, err)
	}
	if api.tokens != 4 || len(api.grants) != 3 {
		t.Errorf("after expiry: %d token reviews and %d access reviews, want 4 and 3", api.tokens, len(api.grants))
	}
}
