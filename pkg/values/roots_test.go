package values

import (
	"errors"
	"testing"
)

type rootsCase struct {
	name    string
	policy  RootPolicy
	patch   string
	wantErr string
}

func TestCheckRootsModuleHook(t *testing.T) {
	module := ModuleHookRoots("certManager")
	runRootsCases(t, []rootsCase{
		{name: "empty patch", policy: module, patch: ``},
		{
			name:   "module hook patches its own section",
			policy: module,
			patch:  `[{"op":"add","path":"/certManager/a","value":1},{"op":"remove","path":"/certManager"},{"op":"move","from":"/certManager/a","path":"/certManager/b"}]`,
		},
		{
			name:    "module hook may not patch global",
			policy:  module,
			patch:   `[{"op":"add","path":"/certManager/a","value":1},{"op":"add","path":"/global/a","value":1}]`,
			wantErr: `patch op 1: add "/global/a": patch root not allowed: "global" (allowed: only "certManager")`,
		},
		{
			name:    "module hook may not enable modules",
			policy:  module,
			patch:   `{"op":"add","path":"/certManagerEnabled","value":false}`,
			wantErr: `patch op 0: add "/certManagerEnabled": patch root not allowed: "certManagerEnabled"`,
		},
		{
			name:    "module hook may not move from another section",
			policy:  module,
			patch:   `{"op":"copy","from":"/global/secret","path":"/certManager/secret"}`,
			wantErr: `patch op 0: copy "/global/secret": patch root not allowed: "global"`,
		},
		{
			name:    "prefix of the module key is not the module key",
			policy:  module,
			patch:   `{"op":"add","path":"/certManagerX/a","value":1}`,
			wantErr: `root not allowed: "certManagerX"`,
		},
		{
			name:    "empty module key allows nothing",
			policy:  ModuleHookRoots(""),
			patch:   `{"op":"add","path":"/a","value":1}`,
			wantErr: `root not allowed: "a" (allowed: only "")`,
		},
	})
}

func TestCheckRootsGlobalHook(t *testing.T) {
	global := GlobalHookRoots()
	runRootsCases(t, []rootsCase{
		{
			name:   "global hook patches global and Enabled keys",
			policy: global,
			patch:  `[{"op":"add","path":"/global/a/b","value":1},{"op":"add","path":"/certManagerEnabled","value":true},{"op":"remove","path":"/fooEnabled"}]`,
		},
		{
			name:    "global hook may not patch a module section",
			policy:  global,
			patch:   `{"op":"add","path":"/certManager/a","value":1}`,
			wantErr: `patch op 0: add "/certManager/a": patch root not allowed: "certManager" (allowed: "global" and "<module>Enabled" keys)`,
		},
		{
			name:    "bare Enabled is not a module switch",
			policy:  global,
			patch:   `{"op":"add","path":"/Enabled","value":true}`,
			wantErr: `root not allowed: "Enabled"`,
		},
		{
			name:    "escaped root is compared unescaped",
			policy:  global,
			patch:   `{"op":"add","path":"/glo~1bal/a","value":1}`,
			wantErr: `root not allowed: "glo/bal"`,
		},
		{
			name:    "whole document",
			policy:  global,
			patch:   `{"op":"add","path":"","value":{}}`,
			wantErr: `patch op 0: add "": patch root not allowed: empty root (the whole document may not be patched)`,
		},
		{
			name:    "slash is rejected",
			policy:  global,
			patch:   `{"op":"remove","path":"/"}`,
			wantErr: `patch op 0: remove "/": patch root not allowed: empty root`,
		},
		{
			name:    "empty first token aliases the document",
			policy:  global,
			patch:   `{"op":"add","path":"//certManager","value":{}}`,
			wantErr: `patch op 0: add "//certManager": patch root not allowed: empty root`,
		},
		{
			name:    "nil Allow allows nothing",
			policy:  RootPolicy{Description: "nothing"},
			patch:   `{"op":"add","path":"/global","value":1}`,
			wantErr: `root not allowed: "global" (allowed: nothing)`,
		},
	})

	t.Run("hand-built invalid pointer", func(t *testing.T) {
		err := Patch{{Op: "remove", Path: "global"}}.CheckRoots(global)
		checkErr(t, err, `patch op 0: remove "global": patch root not allowed: pointer "global" does not start with "/"`)
	})
}

func runRootsCases(t *testing.T, tests []rootsCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := mustPatch(t, tt.patch).CheckRoots(tt.policy)
			checkErr(t, err, tt.wantErr)
			if tt.wantErr != "" && !errors.Is(err, ErrRootNotAllowed) {
				t.Errorf("error %v does not wrap ErrRootNotAllowed", err)
			}
		})
	}
}
