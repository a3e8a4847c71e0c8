// Package helm deploys modules as Helm releases in the operator's namespace.
//
// It and the packages under it are the only ones that import
// helm.sh/helm/v3 (STYLE 9). It renders a
// module's chart against the cluster, decides whether the release needs a
// deployment (a pure function of the last revision, the rendered checksum
// and the objects present), installs or upgrades it, recovers revisions
// left pending by a killed process and deletes the objects they left
// behind, uninstalls, lists the releases the operator owns, and adopts or
// lists those it did not label. Every
// revision it creates carries LabelManagedBy and LabelChecksum on its
// storage record; every object it renders carries LabelManagedBy and
// LabelModule, and no other label of the chart's is changed. It never takes an existing object of another release or of
// none unless handed over (objects.AnnotationAdopt, Options.AdoptObjects), nor a
// release it did not create unless Options.AdoptUnlabeledReleases.
package helm

// Labels written by this package. Release labels live on Helm's storage
// records (the release Secrets); object labels on every rendered object.
const (
	// LabelManagedBy marks a release as created by the operator; only such
	// releases are returned by Client.Owned and may be purged. It is also
	// set on every rendered object, so the operator's objects can be
	// selected without touching a label the chart sets (Helm's charts set
	// heritage: {{ .Release.Service }}, which the operator leaves alone).
	LabelManagedBy = "addon-operator.io/managed-by"
	// ManagedByValue is the value of LabelManagedBy.
	ManagedByValue = "addon-operator"
	// LabelChecksum holds Rendered.Checksum of the manifests a revision was
	// deployed from.
	LabelChecksum = "addon-operator.io/checksum"
	// LabelModule is set on every rendered object to the release (module)
	// name.
	LabelModule = "addon-operator.io/module"
)
