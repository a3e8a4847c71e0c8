package lint

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// strictCase lints goodTree with one edit and wants exactly these
// problems: what helm lint would find, and no more.
type strictCase struct {
	name      string
	edit      func(tree)
	cm        map[string]string
	overrides []Override
	want      []Problem
}

func strictCases() []strictCase {
	return []strictCase{
		{
			name: "disabled module whose chart does not render",
			edit: func(tr tree) {
				tr["modules/values.yaml"] = "global:\n  domain: example.com\n" // echo off by default
				tr["modules/010-echo/enabled"] = ""
				tr["modules/010-echo/templates/cm.yaml"] = "data: {{ .Values.echo.replicas | nope }}\n"
			},
			want: []Problem{{Severity: Error, File: "modules/010-echo", Rule: RuleRender}},
		},
		{
			name: "broken global schema hides neither hooks nor charts",
			edit: func(tr tree) {
				tr["global-hooks/openapi/config-values.yaml"] = "type: object\nproperties:\n  x: {type: integr}\n"
				tr["modules/010-echo/templates/cm.yaml"] = "data: {{ .Values.echo.replicas | nope }}\n"
				tr["global-hooks/hooks/g.sh"] = "#!/bin/sh\necho '{\"configVersion\":\"v1\",\"beforeAll\":\"soon\"}'\n"
			},
			want: []Problem{
				{Severity: Error, File: "global-hooks/openapi", Rule: RuleSchemaFile},
				{Severity: Error, File: "global-hooks/hooks/g.sh", Key: "beforeAll", Rule: RuleHookConfig},
				{Severity: Error, File: "modules/010-echo", Rule: RuleRender},
			},
		},
		{
			name: "broken module schema hides not its chart",
			edit: func(tr tree) {
				tr["modules/010-echo/openapi/values.yaml"] = "type: [\n"
				tr["modules/010-echo/templates/cm.yaml"] = "data: {{ .Values.echo.replicas | nope }}\n"
			},
			want: []Problem{
				{Severity: Error, File: "modules/010-echo/openapi", Rule: RuleSchemaFile},
				{Severity: Error, File: "modules/010-echo", Rule: RuleRender},
			},
		},
		{
			name: "broken module.yaml hides not the other module's values",
			edit: func(tr tree) {
				tr["modules/020-other/module.yaml"] = "weight: [\n"
				tr["modules/010-echo/values.yaml"] = "echo:\n  image: nginx\n  mode: slow\n"
			},
			want: []Problem{
				{Severity: Error, File: "modules/020-other/module.yaml", Rule: RuleModuleDefinition},
				{Severity: Error, File: "modules/010-echo/values.yaml", Key: "echo.mode", Rule: RuleValuesSchema},
			},
		},
	}
}

func strictValuesCases() []strictCase {
	return []strictCase{
		{
			name: "values.yaml default breaking the schema though the ConfigMap overrides it",
			edit: func(tr tree) { tr["modules/010-echo/values.yaml"] = "echo:\n  image: nginx\n  replicas: many\n" },
			cm:   map[string]string{"echo": "replicas: 2\n"},
			want: []Problem{{Severity: Error, File: "modules/010-echo/values.yaml", Key: "echo.replicas", Rule: RuleValuesSchema,
				Message: "must be of type integer, got string (schema modules/010-echo/openapi/values.yaml)"}},
		},
		{
			name: "unknown key in values.yaml names values.yaml with the values-schema rule",
			edit: func(tr tree) { tr["modules/010-echo/values.yaml"] = "echo:\n  image: nginx\n  replicaz: 1\n" },
			want: []Problem{{Severity: Error, File: "modules/010-echo/values.yaml", Key: "echo.replicaz", Rule: RuleValuesSchema,
				Message: "is not allowed (additionalProperties is false) (schema modules/010-echo/openapi/values.yaml)"}},
		},
		{
			name: "bad key in modules/values.yaml names that file",
			edit: func(tr tree) { tr["modules/values.yaml"] += "echo:\n  mode: slow\n" },
			want: []Problem{{Severity: Error, File: "modules/values.yaml", Key: "echo.mode", Rule: RuleValuesSchema,
				Message: "must be one of [fast safe] (schema modules/010-echo/openapi/values.yaml)"}},
		},
		{
			name:      "Enabled key of an unknown module in --set",
			overrides: []Override{{File: "--set", Values: values.Values{"nopeEnabled": true}}},
			want:      []Problem{{Severity: Error, File: "--set", Key: "nopeEnabled", Rule: RuleUnknownKey, Message: `"nopeEnabled" names no module`}},
		},
		{
			name:      "value of --values breaking the schema names the file",
			overrides: []Override{{File: "over.yaml", Values: values.Values{"echo": map[string]any{"mode": "slow"}}}},
			want: []Problem{{Severity: Error, File: "over.yaml", Key: "echo.mode", Rule: RuleValuesSchema,
				Message: "must be one of [fast safe] (schema modules/010-echo/openapi/values.yaml)"}},
		},
		{
			name: "two problems in one hook are two problems",
			edit: func(tr tree) {
				tr["modules/010-echo/hooks/startup.sh"] = "#!/bin/sh\necho '{\"configVersion\":\"v1\",\"onStartup\":\"soon\",\"schedule\":[{\"crontab\":\"bad\"}]}'\n"
			},
			want: []Problem{
				{Severity: Error, File: "modules/010-echo/hooks/startup.sh", Key: "onStartup", Rule: RuleHookConfig},
				{Severity: Error, File: "modules/010-echo/hooks/startup.sh", Key: "schedule[0].crontab", Rule: RuleHookConfig},
			},
		},
	}
}

func TestLintStrict(t *testing.T) {
	for _, tt := range append(strictCases(), strictValuesCases()...) {
		t.Run(tt.name, func(t *testing.T) {
			tr := goodTree()
			tr["modules/values.yaml"] = "global:\n  domain: example.com\nechoEnabled: true\n"
			if tt.edit != nil {
				tt.edit(tr)
			}
			root := write(t, tr)
			in := input(root, tt.cm)
			in.Overrides = tt.overrides
			got := Run(t.Context(), in)
			// Messages quoting a tool's own words (Go templates, YAML, the
			// hook config parser) are checked for being present only.
			for i := range got {
				if i < len(tt.want) && tt.want[i].Message == "" {
					if got[i].Message == "" {
						t.Errorf("problem without message: %+v", got[i])
					}
					got[i].Message = ""
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			if !HasErrors(got, false) {
				t.Error("HasErrors = false, want true")
			}
		})
	}
}

func input(root string, cm map[string]string) Input {
	return Input{
		Discover: module.Options{
			ModulesDirs:    []string{filepath.Join(root, "modules")},
			GlobalHooksDir: filepath.Join(root, "global-hooks"),
		},
		Namespace:  "default",
		ConfigFile: "cm.yaml",
		ConfigData: cm,
		Runner:     &hook.Executor{},
		Base:       root,
	}
}
