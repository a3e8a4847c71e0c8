package kube

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
)

// RetryOnConflict runs fn until it returns anything but a Conflict,
// with client-go's default backoff; when the attempts run out it returns the
// last Conflict.
func RetryOnConflict(ctx context.Context, fn func(context.Context) error) error {
	var last error
	err := wait.ExponentialBackoffWithContext(ctx, retry.DefaultBackoff, func(ctx context.Context) (bool, error) {
		last = fn(ctx)
		if apierrors.IsConflict(last) {
			return false, nil
		}
		return true, last
	})
	if wait.Interrupted(err) && ctx.Err() == nil {
		return last
	}
	return err
}
