package moduleobject

import (
	"maps"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Labels of a Module object that show module.yaml's Deckhouse fields, so
// that objects may be selected by them: kubectl get modules -l
// module.addon-operator.io/critical=true.
const (
	CriticalLabel       = "module.addon-operator.io/critical"
	StageLabel          = "module.addon-operator.io/stage"
	ExclusiveGroupLabel = "module.addon-operator.io/exclusive-group"
	// TagLabelPrefix and SubsystemLabelPrefix name one label per tag and
	// subsystem, with an empty value.
	TagLabelPrefix       = "tag.module.addon-operator.io/"
	SubsystemLabelPrefix = "subsystem.module.addon-operator.io/"
)

// DefinitionLabels returns the labels of a module's definition fields. A
// stage becomes a label value in lower case with dashes for spaces
// ("General Availability": general-availability); a value or tag that
// cannot be a label is left out (status and `modules list` show it).
func DefinitionLabels(critical bool, stage, group string, tags, subsystems []string) map[string]string {
	out := map[string]string{}
	if critical {
		out[CriticalLabel] = "true"
	}
	if v := strings.ToLower(strings.Join(strings.Fields(stage), "-")); v != "" && len(validation.IsValidLabelValue(v)) == 0 {
		out[StageLabel] = v
	}
	if group != "" && len(validation.IsValidLabelValue(group)) == 0 {
		out[ExclusiveGroupLabel] = group
	}
	for _, t := range tags {
		if k := TagLabelPrefix + t; len(validation.IsQualifiedName(k)) == 0 {
			out[k] = ""
		}
	}
	for _, s := range subsystems {
		if k := SubsystemLabelPrefix + s; len(validation.IsQualifiedName(k)) == 0 {
			out[k] = ""
		}
	}
	return out
}

// ownLabels are the labels the writer sets on every object, with the
// definition labels of s.
func (w *Writer) ownLabels(s State) map[string]string {
	out := maps.Clone(s.Labels)
	if out == nil {
		out = map[string]string{}
	}
	out[NamespaceLabel] = w.opts.Namespace
	out["app.kubernetes.io/managed-by"] = "addon-operator"
	return out
}

// definitionLabels keeps, of an object's labels, those DefinitionLabels
// sets.
func definitionLabels(labels map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range labels {
		switch {
		case k == CriticalLabel, k == StageLabel, k == ExclusiveGroupLabel,
			strings.HasPrefix(k, TagLabelPrefix), strings.HasPrefix(k, SubsystemLabelPrefix):
			out[k] = v
		}
	}
	return out
}
