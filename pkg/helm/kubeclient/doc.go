// Package kubeclient is Helm's kube client as pkg/helm runs it for one
// operation: without Helm's reachability check, noting the objects its
// creates returned, sparing on delete the objects of other owners, and
// following the chart hooks Helm waits for, so that a hook Job that fails
// or runs out of time is named in the error (HookError).
package kubeclient
