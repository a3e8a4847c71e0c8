package lint

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/module"
)

// tree is a module tree: file path to content; paths ending in a script
// body starting with #! are made executable unless listed in plain.
type tree map[string]string

// goodTree is a valid tree; each case of TestLintFindsEachProblem breaks
// it in one way.
func goodTree() tree {
	return tree{
		"modules/values.yaml":                "global:\n  domain: example.com\necho-unused: null\n",
		"modules/010-echo/Chart.yaml":        "apiVersion: v2\nname: echo\nversion: 0.1.0\n",
		"modules/010-echo/values.yaml":       "echo:\n  image: nginx\n",
		"modules/010-echo/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: echo\ndata:\n  replicas: {{ .Values.echo.replicas | quote }}\n",
		"modules/010-echo/openapi/config-values.yaml": "type: object\nadditionalProperties: false\nproperties:\n" +
			"  replicas: {type: integer, default: 1}\n  mode: {type: string, enum: [fast, safe], default: safe}\n" +
			"  name: {type: string, pattern: '^[a-z]+$'}\n  image: {type: string}\n",
		"modules/010-echo/openapi/values.yaml": "x-extend:\n  schema: config-values.yaml\ntype: object\nx-required-for-helm: [image]\n",
		"modules/010-echo/hooks/startup.sh":    "#!/bin/sh\nif [ \"$1\" = --config ]; then echo '{\"configVersion\":\"v1\",\"onStartup\":10}'; exit 0; fi\n",
		"modules/010-echo/enabled":             "#!/bin/sh\necho true >\"$MODULE_ENABLED_RESULT\"\n",
		"modules/020-other/values.yaml":        "otherEnabled: true\n",
		"global-hooks/hooks/g.sh":              "#!/bin/sh\nif [ \"$1\" = --config ]; then echo 'configVersion: v1\nbeforeAll: 5'; exit 0; fi\n",
	}
}

func write(t *testing.T, tr tree, plain ...string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range tr {
		if content == "" && name != "modules/values.yaml" {
			continue // removed by the case
		}
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o600)
		if len(content) > 2 && content[:2] == "#!" && !contains(plain, name) {
			mode = 0o700
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func lint(t *testing.T, root string, cm map[string]string) []Problem {
	t.Helper()
	return Run(t.Context(), Input{
		Discover: module.Options{
			ModulesDirs:    []string{filepath.Join(root, "modules")},
			GlobalHooksDir: filepath.Join(root, "global-hooks"),
		},
		Namespace:  "default",
		ConfigFile: "cm.yaml",
		ConfigData: cm,
		Runner:     &hook.Executor{},
		Base:       root,
	})
}

func TestLintGoodTree(t *testing.T) {
	tr := goodTree()
	tr["modules/values.yaml"] = "global:\n  domain: example.com\nechoEnabled: true\n"
	got := lint(t, write(t, tr), map[string]string{"echo": "replicas: 2\nmode: fast\n", "otherEnabled": "false"})
	if len(got) != 0 {
		t.Errorf("problems in a good tree:\n%v", got)
	}
}

// brokenTree breaks the good tree in one way and wants that one problem,
// named by file, key and rule.
type brokenTree struct {
	name  string
	edit  func(tree)
	plain []string // scripts left without the x bit
	cm    map[string]string
	want  []Problem
}

func brokenTrees() []brokenTree {
	return append(brokenConfigMaps(), brokenFiles()...)
}

func brokenConfigMaps() []brokenTree {
	return []brokenTree{
		{
			name: "wrong type in the ConfigMap",
			cm:   map[string]string{"echo": "replicas: many\n"},
			want: []Problem{{Severity: Error, File: "cm.yaml", Key: "echo.replicas", Rule: RuleConfigSchema,
				Message: "must be of type integer, got string (schema modules/010-echo/openapi/config-values.yaml)"}},
		},
		{
			name: "unknown field in the ConfigMap",
			cm:   map[string]string{"echo": "replicaz: 2\n"},
			want: []Problem{{Severity: Error, File: "cm.yaml", Key: "echo.replicaz", Rule: RuleConfigSchema,
				Message: "is not allowed (additionalProperties is false) (schema modules/010-echo/openapi/config-values.yaml)"}},
		},
		{
			name: "enum in the ConfigMap",
			cm:   map[string]string{"echo": "mode: slow\n"},
			want: []Problem{{Severity: Error, File: "cm.yaml", Key: "echo.mode", Rule: RuleConfigSchema,
				Message: "must be one of [fast safe] (schema modules/010-echo/openapi/config-values.yaml)"}},
		},
		{
			name: "misspelled module key in the ConfigMap",
			cm:   map[string]string{"ecko": "replicas: 2\n"},
			want: []Problem{{Severity: Error, File: "cm.yaml", Key: "ecko", Rule: RuleUnknownKey, Message: `"ecko" names no module; did you mean "echo"?`}},
		},
		{
			name: "misspelled Enabled key in the ConfigMap",
			cm:   map[string]string{"otherrEnabled": "true"},
			want: []Problem{{Severity: Error, File: "cm.yaml", Key: "otherrEnabled", Rule: RuleUnknownKey,
				Message: `"otherrEnabled" names no module; did you mean "otherEnabled"?`}},
		},
		{
			name: "CEL rule of the schema broken by the ConfigMap",
			edit: func(tr tree) {
				tr["modules/010-echo/openapi/config-values.yaml"] += "x-deckhouse-validations:\n" +
					"- {expression: \"self.mode != 'fast' || self.replicas > 1\", message: fast mode needs two replicas}\n"
			},
			cm: map[string]string{"echo": "mode: fast\n"},
			want: []Problem{{Severity: Error, File: "cm.yaml", Key: "echo", Rule: RuleConfigSchema,
				Message: "is invalid: fast mode needs two replicas (schema modules/010-echo/openapi/config-values.yaml)"}},
		},
		{
			name: "enabled flag that is no boolean",
			cm:   map[string]string{"echoEnabled": "yes"},
			want: []Problem{{Severity: Error, File: "cm.yaml", Key: "echoEnabled", Rule: RuleConfigMapKey,
				Message: `enabled flag is "yes", want "true" or "false"`}},
		},
	}
}

func brokenFiles() []brokenTree {
	return []brokenTree{
		{
			name: "misspelled module key in modules/values.yaml",
			edit: func(tr tree) { tr["modules/values.yaml"] = "echoEnabled: true\nech:\n  image: x\n" },
			want: []Problem{{Severity: Error, File: "modules/values.yaml", Key: "ech", Rule: RuleUnknownKey, Message: `"ech" names no module; did you mean "echo"?`}},
		},
		{
			name: "broken schema file",
			edit: func(tr tree) {
				tr["modules/010-echo/openapi/config-values.yaml"] = "type: object\nproperties:\n  replicas: {type: integr}\n"
			},
			want: []Problem{{Severity: Error, File: "modules/010-echo/openapi", Rule: RuleSchemaFile}},
		},
		{
			name: "missing x-required-for-helm key",
			edit: func(tr tree) { tr["modules/010-echo/values.yaml"] = "echo: {}\n" },
			want: []Problem{{Severity: Error, File: "modules/010-echo/openapi/values.yaml", Key: "echo.image", Rule: RuleHelmSchema,
				Message: "is required (schema modules/010-echo/openapi/values.yaml)"}},
		},
		{
			name: "hook printing an invalid --config",
			edit: func(tr tree) {
				tr["modules/010-echo/hooks/startup.sh"] = "#!/bin/sh\necho '{\"configVersion\":\"v1\",\"onStartup\":\"soon\"}'\n"
			},
			want: []Problem{{Severity: Error, File: "modules/010-echo/hooks/startup.sh", Key: "onStartup", Rule: RuleHookConfig}},
		},
		{
			name:  "hook not executable",
			plain: []string{"global-hooks/hooks/g.sh"},
			want:  []Problem{{Severity: Error, File: "global-hooks/hooks/g.sh", Rule: RuleNotExecutable, Message: "hook file is not executable, ignored"}},
		},
		{
			name:  "enabled script not executable",
			plain: []string{"modules/010-echo/enabled"},
			want:  []Problem{{Severity: Error, File: "modules/010-echo/enabled", Rule: RuleNotExecutable, Message: "enabled script is not executable, ignored"}},
		},
		{
			name: "enabled script failing",
			edit: func(tr tree) { tr["modules/010-echo/enabled"] = "#!/bin/sh\necho broken >&2\nexit 3\n" },
			want: []Problem{{Severity: Error, Rule: RuleEnabledScript}},
		},
		{
			name: "duplicate module",
			edit: func(tr tree) { tr["modules/030-echo/values.yaml"] = "echo: {}\n" },
			want: []Problem{{Severity: Error, File: "modules/030-echo", Rule: RuleDuplicateModule,
				Message: "duplicate module dir ignored (kept modules/010-echo)"}},
		},
		{
			name: "broken template",
			edit: func(tr tree) { tr["modules/010-echo/templates/cm.yaml"] = "data: {{ .Values.echo.replicas | nope }}\n" },
			want: []Problem{{Severity: Error, File: "modules/010-echo", Rule: RuleRender}},
		},
		{
			name: "module.yaml with a value of the wrong type",
			edit: func(tr tree) { tr["modules/020-other/module.yaml"] = "weight: 20\ntags: network\n" },
			want: []Problem{{Severity: Error, File: "modules/020-other/module.yaml", Key: "tags", Rule: RuleModuleDefinition,
				Message: "want []string, got string"}},
		},
		{
			name: "invalid module name",
			edit: func(tr tree) { tr["modules/040-Bad_Name/values.yaml"] = "x: 1\n" },
			want: []Problem{{Severity: Error, File: "modules", Rule: RuleDiscovery}},
		},
	}
}

func TestLintFindsEachProblem(t *testing.T) {
	for _, tt := range brokenTrees() {
		t.Run(tt.name, func(t *testing.T) {
			tr := goodTree()
			tr["modules/values.yaml"] = "global:\n  domain: example.com\nechoEnabled: true\n"
			if tt.edit != nil {
				tt.edit(tr)
			}
			root := write(t, tr, tt.plain...)
			got := lint(t, root, tt.cm)
			// Messages quoting a tool's own words (Go templates, the hook
			// config parser) are checked for being present only.
			ignoreMsg := tt.want[0].Message == ""
			for i := range got {
				if ignoreMsg {
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

func TestHasErrors(t *testing.T) {
	warn := []Problem{{Severity: Warning, Rule: RuleDiscovery}}
	if HasErrors(warn, false) {
		t.Error("a warning alone fails without --strict")
	}
	if !HasErrors(warn, true) {
		t.Error("a warning does not fail with --strict")
	}
}

func TestNearest(t *testing.T) {
	keys := []string{"echoService", "certManager", "ingressNginx"}
	for in, want := range map[string]string{"echoServce": "echoService", "certmanager": "certManager", "prometheus": ""} {
		if got := nearest(in, keys); got != want {
			t.Errorf("nearest(%q) = %q, want %q", in, got, want)
		}
	}
}
