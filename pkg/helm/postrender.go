package helm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"
)

// docSeparator matches a YAML document separator line.
var docSeparator = regexp.MustCompile(`(?m)^---[ \t]*(?:\r?\n|$)`)

// labeler is a Helm post-renderer that sets labels on every object of a
// multi-document manifest, the items of a List rather than the List. Documents that are
// not objects (comments only, scalars, invalid YAML) pass through untouched,
// so Helm reports real errors with the author's text. Labelled documents are
// re-encoded: keys sorted, comments inside the object dropped, leading
// comments (Helm's "# Source:" line) kept.
//
// Helm runs post-renderers on the manifest only, never on chart hooks.
type labeler struct {
	labels map[string]string
}

// objectLabels are the labels set on every object of release. All keys are
// under the operator's prefix: a chart's own labels (heritage,
// app.kubernetes.io/managed-by...) are never overwritten, and keys under
// the prefix are the operator's, whatever a chart sets.
func objectLabels(release string) map[string]string {
	return map[string]string{LabelManagedBy: ManagedByValue, LabelModule: release}
}

// Run implements postrender.PostRenderer.
func (l labeler) Run(rendered *bytes.Buffer) (*bytes.Buffer, error) {
	out := new(bytes.Buffer)
	for _, doc := range docSeparator.Split(rendered.String(), -1) {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		labelled, err := l.label(doc)
		if err != nil {
			return nil, err
		}
		out.WriteString("---\n")
		out.WriteString(labelled)
	}
	return out, nil
}

// label returns doc with the labels set, or doc itself when it is not an
// object.
func (l labeler) label(doc string) (string, error) {
	head, body := splitLeadingComments(doc)
	obj, ok := decodeObject(body)
	if !ok {
		return doc, nil
	}
	if items, ok := obj["items"].([]any); ok && strings.HasSuffix(obj["kind"].(string), "List") {
		// A List is unwrapped by the client; its items are the objects.
		for _, item := range items {
			if m, ok := item.(map[string]any); ok && isObject(m) {
				setLabels(m, l.labels)
			}
		}
	} else {
		setLabels(obj, l.labels)
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return "", fmt.Errorf("encode labelled object: %w", err)
	}
	encoded, err := yaml.JSONToYAML(raw)
	if err != nil {
		return "", fmt.Errorf("encode labelled object: %w", err)
	}
	return head + string(encoded), nil
}

// splitLeadingComments splits doc after its leading comment and blank lines.
func splitLeadingComments(doc string) (head, body string) {
	rest := doc
	for rest != "" {
		line, after, found := strings.Cut(rest, "\n")
		trimmed := strings.TrimSpace(line)
		if trimmed != "" && !strings.HasPrefix(trimmed, "#") {
			break
		}
		if !found {
			return doc, ""
		}
		rest = after
	}
	return doc[:len(doc)-len(rest)], rest
}

// decodeObject decodes a YAML document into a Kubernetes object, keeping
// numbers exact. It reports false for anything that is not an object.
func decodeObject(body string) (map[string]any, bool) {
	if strings.TrimSpace(body) == "" {
		return nil, false
	}
	raw, err := yaml.YAMLToJSON([]byte(body))
	if err != nil {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil || !isObject(obj) {
		return nil, false
	}
	return obj, true
}

func isObject(m map[string]any) bool {
	apiVersion, _ := m["apiVersion"].(string)
	kind, _ := m["kind"].(string)
	return apiVersion != "" && kind != ""
}

func setLabels(obj map[string]any, labels map[string]string) {
	meta, ok := obj["metadata"].(map[string]any)
	if !ok {
		meta = map[string]any{}
		obj["metadata"] = meta
	}
	existing, ok := meta["labels"].(map[string]any)
	if !ok {
		existing = map[string]any{}
		meta["labels"] = existing
	}
	for k, v := range labels {
		existing[k] = v
	}
}
