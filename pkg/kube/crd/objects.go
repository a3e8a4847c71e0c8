package crd

import (
	"encoding/json"
	"fmt"
)

// Objects returns the CRDs Apply would apply from dir, as objects; a
// missing dir has none.
func Objects(dir string) ([]map[string]any, error) {
	docs, err := crdLoad(dir)
	if err != nil {
		return nil, fmt.Errorf("load CRDs: %w", err)
	}
	out := make([]map[string]any, 0, len(docs))
	for _, doc := range docs {
		var o map[string]any
		if err := json.Unmarshal(doc.body, &o); err != nil {
			return nil, fmt.Errorf("CRD %q from %s: %w", doc.name, doc.file, err)
		}
		out = append(out, o)
	}
	return out, nil
}
