package kube

import (
	"encoding/base64"
	"fmt"
	"maps"
)

// SecretData returns obj as the API server stores it when obj is a v1
// Secret with stringData: the stringData entries base64-encoded into data
// (replacing data entries of the same key) and stringData gone, which the
// server never returns. Other objects are returned as they are; obj is
// never changed.
func SecretData(obj map[string]any) map[string]any {
	stringData, ok := obj["stringData"].(map[string]any)
	if !ok || obj["apiVersion"] != "v1" || obj["kind"] != "Secret" {
		return obj
	}
	out := maps.Clone(obj)
	delete(out, "stringData")
	data, _ := obj["data"].(map[string]any)
	data = maps.Clone(data)
	if data == nil {
		data = map[string]any{}
	}
	for key, value := range stringData {
		data[key] = base64.StdEncoding.EncodeToString([]byte(fmt.Sprint(value)))
	}
	out["data"] = data
	return out
}
