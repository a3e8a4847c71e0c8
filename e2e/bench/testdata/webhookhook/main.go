// Command webhookhook is the compiled admission hook of the webhook
// benchmark: it answers as hooks/bash does, without a shell or jq.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

const config = `configVersion: v1
kubernetesValidating:
- name: compiled.bench.addon-operator.io
  labelSelector: {matchLabels: {hook: compiled}}
  rules:
  - {apiGroups: [""], apiVersions: [v1], resources: [configmaps], operations: [CREATE]}
`

func main() {
	if len(os.Args) > 1 && os.Args[1] == "--config" {
		fmt.Print(config)
		return
	}
	if err := answer(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func answer() error {
	data, err := os.ReadFile(os.Getenv("BINDING_CONTEXT_PATH"))
	if err != nil {
		return err
	}
	var contexts []struct {
		Review struct {
			Request struct {
				Object struct {
					Metadata struct {
						Name         string `json:"name"`
						GenerateName string `json:"generateName"`
					} `json:"metadata"`
				} `json:"object"`
			} `json:"request"`
		} `json:"review"`
	}
	if err := json.Unmarshal(data, &contexts); err != nil || len(contexts) != 1 {
		return fmt.Errorf("binding context: %w", err)
	}
	meta := contexts[0].Review.Request.Object.Metadata
	resp := `{"allowed": true}`
	if strings.HasPrefix(meta.Name+meta.GenerateName, "deny-") {
		resp = `{"allowed": false, "message": "denied by the compiled hook"}`
	}
	return os.WriteFile(os.Getenv("VALIDATING_RESPONSE_PATH"), []byte(resp), 0o600)
}
