// Package crd applies the CustomResourceDefinitions a module ships in its
// crds/ directory and waits until the API server serves them.
package crd

import (
	"context"
	"errors"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
)

const (
	// establishTimeout bounds the wait for each applied CRD to become
	// established.
	establishTimeout = time.Minute
	// pollInterval is how often an applied CRD's conditions are read.
	pollInterval = 100 * time.Millisecond
)

// ErrNamesRejected marks a CRD whose names the API server did not accept
// (a conflict with another CRD, invalid names); applying it again does not
// help until the CRD or the conflicting one changes.
var ErrNamesRejected = errors.New("CRD names not accepted")

// Apply applies the CustomResourceDefinitions in dir, a module's crds/
// directory, and waits until each is established, so custom resources of
// their kinds can be created when it returns. It returns the CRDs' names in
// file order; a missing dir has none.
//
// Every .yaml or .yml file under dir (recursively) whose name does not
// start with "doc-" or "_" is read; each non-empty document must be an
// apiextensions.k8s.io/v1 CustomResourceDefinition, and anything else is an
// error naming the file, returned before any CRD is applied. CRDs are
// applied server-side as fieldManager, forcing conflicts, so they are
// created or updated to the files' content; a status in the files is
// ignored. Nothing here deletes a CRD.
//
// The wait for each CRD ends after a minute, earlier with ctx or with
// ErrNamesRejected. A kube.Discovery must be refreshed to see the new kinds
// at once, and discovery may lag behind the Established condition briefly.
func Apply(ctx context.Context, client apiextensionsclient.Interface, dir, fieldManager string) ([]string, error) {
	if fieldManager == "" {
		return nil, errors.New("apply CRDs: no field manager")
	}
	docs, err := crdLoad(dir)
	if err != nil {
		return nil, fmt.Errorf("load CRDs: %w", err)
	}
	crds := client.ApiextensionsV1().CustomResourceDefinitions()
	var names []string
	seen := make(map[string]bool, len(docs))
	for _, doc := range docs {
		opts := metav1.PatchOptions{FieldManager: fieldManager, Force: ptr.To(true)}
		if _, err := crds.Patch(ctx, doc.name, types.ApplyPatchType, doc.body, opts); err != nil {
			return nil, fmt.Errorf("apply CRD %q from %s: %w", doc.name, doc.file, err)
		}
		if !seen[doc.name] {
			seen[doc.name] = true
			names = append(names, doc.name)
		}
	}
	for _, name := range names {
		if err := waitEstablished(ctx, client, name); err != nil {
			return nil, err
		}
	}
	return names, nil
}

// waitEstablished polls the CRD name until it is established.
func waitEstablished(ctx context.Context, client apiextensionsclient.Interface, name string) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, pollInterval, establishTimeout, true, func(ctx context.Context) (bool, error) {
		done, pending, err := check(ctx, client, name)
		last = pending
		return done, err
	})
	if err != nil {
		if last != nil && !errors.Is(err, ErrNamesRejected) {
			err = fmt.Errorf("%w (last: %w)", err, last)
		}
		return fmt.Errorf("wait for CRD %q to be established: %w", name, err)
	}
	return nil
}

// check reads the CRD name once. It reports done when it is
// established, a failure with ErrNamesRejected, and otherwise why it is
// not done yet as pending: not yet established, or a failed read, which
// the next poll retries since the API server may be briefly unavailable.
func check(ctx context.Context, client apiextensionsclient.Interface, name string) (done bool, pending, err error) {
	crd, getErr := client.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
	if getErr != nil {
		return false, getErr, nil
	}
	done, err = crdEstablished(crd)
	if err == nil && !done {
		pending = errors.New("not established yet")
	}
	return done, pending, err
}

// crdEstablished reports whether the CRD's status says it is established
// for its current generation, failing with ErrNamesRejected when its
// names were not accepted.
func crdEstablished(crd *apiextensionsv1.CustomResourceDefinition) (bool, error) {
	// Servers with CRDObservedGenerationTracking say which generation the
	// status describes; others leave it zero.
	if g := crd.Status.ObservedGeneration; g != 0 && g < crd.Generation {
		return false, nil
	}
	established := false
	for _, c := range crd.Status.Conditions {
		if c.ObservedGeneration != 0 && c.ObservedGeneration < crd.Generation {
			continue
		}
		switch {
		case c.Type == apiextensionsv1.NamesAccepted && c.Status == apiextensionsv1.ConditionFalse:
			return false, fmt.Errorf("%w: %s: %s", ErrNamesRejected, c.Reason, c.Message)
		case c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue:
			established = true
		}
	}
	return established, nil
}
