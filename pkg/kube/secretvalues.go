package kube

import (
	"encoding/base64"
	"fmt"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// SecretValues returns the values of every v1 Secret in a rendered
// manifest (multi-document YAML, Lists included): its data decoded from
// base64 and its stringData, for redaction from texts that leave the
// process. Documents that cannot be read are skipped, not errors: a
// manifest the API server rejects must still give the Secrets it holds.
func SecretValues(manifest string) []string {
	var out []string
	_ = EachDocument(strings.NewReader(manifest), func(_ int, doc []byte) error {
		var v any
		_ = utilyaml.Unmarshal(doc, &v) // a document that cannot be read gives nothing
		obj, _ := v.(map[string]any)
		kind, _ := obj["kind"].(string)
		if items, ok := obj["items"].([]any); ok && strings.HasSuffix(kind, "List") {
			for _, item := range items {
				m, _ := item.(map[string]any)
				out = append(out, ObjectSecretValues(m)...)
			}
			return nil
		}
		out = append(out, ObjectSecretValues(obj)...)
		return nil
	})
	return out
}

// ObjectSecretValues returns the values of obj when it is a v1 Secret (its
// data decoded from base64, a value that does not decode as it is, and its
// stringData), and nothing for other objects.
func ObjectSecretValues(obj map[string]any) []string {
	if obj == nil || obj["apiVersion"] != "v1" || obj["kind"] != "Secret" {
		return nil
	}
	var out []string
	data, _ := obj["data"].(map[string]any)
	for _, raw := range data {
		s, ok := raw.(string)
		if !ok {
			continue
		}
		if b, err := base64.StdEncoding.DecodeString(s); err == nil {
			s = string(b)
		}
		out = append(out, s)
	}
	stringData, _ := obj["stringData"].(map[string]any)
	for _, raw := range stringData {
		if s, ok := raw.(string); ok {
			out = append(out, s)
		} else if raw != nil {
			out = append(out, fmt.Sprint(raw))
		}
	}
	return out
}
