// Package kube watches and changes Kubernetes objects for hooks: monitors
// (dynamic informers with selectors, jq filters and snapshots) feed
// kubernetes bindings, and the patcher applies the object operations hooks
// write to KUBERNETES_PATCH_PATH.
package kube
