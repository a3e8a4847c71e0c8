package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"
)

// docSeparator matches a YAML document separator line.
var docSeparator = regexp.MustCompile(`(?m)^---[ \t]*(?:\r?\n|$)`)

// Labeler is a Helm post-renderer that sets labels on every object of a
// multi-document manifest (and helm.sh/resource-policy: keep where a nelm
// annotation asks to keep the object, see keeps), the items of a List rather than the List. Documents that are
// not objects (comments only, scalars, invalid YAML) pass through untouched,
// so Helm reports real errors with the author's text. Labelled documents are
// edited as YAML node trees: key order, comments, quoting and literal blocks
// stay as the chart wrote them; only the labels are added (in key order) or
// set.
//
// Helm runs post-renderers on the manifest only, never on chart hooks.
type Labeler struct {
	labels map[string]string
}

// NewLabeler returns a Labeler that sets labels, which it keeps.
func NewLabeler(labels map[string]string) Labeler {
	return Labeler{labels: labels}
}

// Run implements postrender.PostRenderer.
func (l Labeler) Run(rendered *bytes.Buffer) (*bytes.Buffer, error) {
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
// object. The document is edited as a YAML node tree, so that it keeps its
// key order, its comments, its scalars as written (quoting, literal and
// folded blocks) and its numbers exact; only the labels are added or set.
func (l Labeler) label(doc string) (string, error) {
	head, body := splitLeadingComments(doc)
	obj0, ok := decodeObject(body)
	if !ok {
		return doc, nil
	}
	var root yamlv3.Node
	if err := yamlv3.Unmarshal([]byte(body), &root); err != nil || len(root.Content) != 1 ||
		root.Content[0].Kind != yamlv3.MappingNode || hasAlias(&root) {
		// YAML the Kubernetes decoder reads but the node parser does not,
		// or aliases (merge keys) that editing in place could shadow: the
		// object is labelled all the same, re-encoded.
		return l.reencoded(head, obj0)
	}
	obj := root.Content[0]
	if items := mappingValue(obj, "items"); items != nil && items.Kind == yamlv3.SequenceNode && strings.HasSuffix(scalarValue(obj, "kind"), "List") {
		// A List is unwrapped by the client; its items are the objects.
		for _, item := range items.Content {
			if item.Kind == yamlv3.MappingNode && scalarValue(item, "apiVersion") != "" && scalarValue(item, "kind") != "" {
				setNodeLabels(item, l.labels)
				setNodeKeep(item)
			}
		}
	} else {
		setNodeLabels(obj, l.labels)
		setNodeKeep(obj)
	}
	var out bytes.Buffer
	enc := yamlv3.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&root); err != nil {
		return "", fmt.Errorf("encode labelled object: %w", err)
	}
	if err := enc.Close(); err != nil {
		return "", fmt.Errorf("encode labelled object: %w", err)
	}
	return head + out.String(), nil
}

// reencoded sets the labels on a decoded object and encodes it again: keys
// sorted, comments inside the object dropped.
func (l Labeler) reencoded(head string, obj map[string]any) (string, error) {
	if items, ok := obj["items"].([]any); ok && strings.HasSuffix(obj["kind"].(string), "List") {
		for _, item := range items {
			if m, ok := item.(map[string]any); ok && isObject(m) {
				setLabels(m, l.labels)
				setKeep(m)
			}
		}
	} else {
		setLabels(obj, l.labels)
		setKeep(obj)
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

// hasAlias reports whether n uses an alias anywhere.
func hasAlias(n *yamlv3.Node) bool {
	if n.Kind == yamlv3.AliasNode {
		return true
	}
	return slices.ContainsFunc(n.Content, hasAlias)
}

// mappingValue returns the value node of key in mapping m, nil if absent.
func mappingValue(m *yamlv3.Node, key string) *yamlv3.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func scalarValue(m *yamlv3.Node, key string) string {
	if v := mappingValue(m, key); v != nil && v.Kind == yamlv3.ScalarNode {
		return v.Value
	}
	return ""
}

// childMapping returns the mapping under key in m, adding it (or replacing
// a null or a non-mapping) when needed.
func childMapping(m *yamlv3.Node, key string) *yamlv3.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			if m.Content[i+1].Kind != yamlv3.MappingNode {
				m.Content[i+1] = &yamlv3.Node{Kind: yamlv3.MappingNode, Tag: "!!map"}
			}
			return m.Content[i+1]
		}
	}
	child := &yamlv3.Node{Kind: yamlv3.MappingNode, Tag: "!!map"}
	m.Content = append(m.Content, &yamlv3.Node{Kind: yamlv3.ScalarNode, Tag: "!!str", Value: key}, child)
	return child
}

// setNodeLabels sets labels on the object mapping obj, in key order.
func setNodeLabels(obj *yamlv3.Node, labels map[string]string) {
	existing := childMapping(childMapping(obj, "metadata"), "labels")
	existing.Style = 0 // a flow mapping written {} would stay on one line
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		value := &yamlv3.Node{Kind: yamlv3.ScalarNode, Tag: "!!str", Value: labels[k]}
		if v := mappingValue(existing, k); v != nil {
			*v = *value
			continue
		}
		existing.Content = append(existing.Content, &yamlv3.Node{Kind: yamlv3.ScalarNode, Tag: "!!str", Value: k}, value)
	}
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

// ExtendsAPI reports whether manifest holds a CustomResourceDefinition or
// an APIService: deploying or deleting it changes the server's discovery.
func ExtendsAPI(manifest string) bool {
	if !strings.Contains(manifest, "CustomResourceDefinition") && !strings.Contains(manifest, "APIService") {
		return false
	}
	for _, doc := range docSeparator.Split(manifest, -1) {
		_, body := splitLeadingComments(doc)
		obj, ok := decodeObject(body)
		if !ok {
			continue
		}
		group, _, _ := strings.Cut(obj["apiVersion"].(string), "/")
		switch kind := obj["kind"].(string); {
		case group == "apiextensions.k8s.io" && kind == "CustomResourceDefinition",
			group == "apiregistration.k8s.io" && kind == "APIService":
			return true
		}
	}
	return false
}
