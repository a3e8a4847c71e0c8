// Package objects reads and changes a release's objects in the cluster as
// Helm's kube client builds them: which of a manifest's objects exist, who
// owns each by Helm's ownership metadata, which an install or upgrade may
// take (AnnotationAdopt) and taking them, which an uninstall spares, and
// deleting what a failed first install created.
package objects
