package values

import (
	"errors"
	"fmt"
	"strings"
)

// ErrRootNotAllowed marks a patch op that touches a top-level key its author
// may not patch. Retrying cannot fix it.
var ErrRootNotAllowed = errors.New("patch root not allowed")

// RootPolicy says which top-level keys ("roots") a patch may touch.
type RootPolicy struct {
	// Allow reports whether ops may touch the top-level key root. A nil
	// Allow allows nothing.
	Allow func(root string) bool
	// Description names the allowed roots in errors, for example
	// `"global" and "<module>Enabled" keys`.
	Description string
}

// enabledSuffix ends the top-level keys that switch a module on or off.
const enabledSuffix = "Enabled"

// GlobalHookRoots is the policy for global hooks: the "global" section and
// any "<moduleKey>Enabled" key (dynamic enabling).
func GlobalHookRoots() RootPolicy {
	return RootPolicy{
		Allow: func(root string) bool {
			return root == "global" ||
				(len(root) > len(enabledSuffix) && strings.HasSuffix(root, enabledSuffix))
		},
		Description: `"global" and "<module>Enabled" keys`,
	}
}

// ModuleHookRoots is the policy for hooks of the module with the given
// camelCase key: only that module's own section.
func ModuleHookRoots(moduleKey string) RootPolicy {
	return RootPolicy{
		Allow:       func(root string) bool { return moduleKey != "" && root == moduleKey },
		Description: fmt.Sprintf("only %q", moduleKey),
	}
}

// CheckRoots verifies that every op's path, and the from of move and copy,
// lies under a root the policy allows. A path of "" or "/" (the whole
// document, or its empty-named key) is always rejected. The error wraps
// ErrRootNotAllowed and names the first offending op by 0-based index, its
// kind, the pointer and the allowed roots.
func (p Patch) CheckRoots(policy RootPolicy) error {
	for i, op := range p {
		ptrs := []string{op.Path}
		if needsFrom(op.Op) {
			ptrs = append(ptrs, op.From)
		}
		for _, ptr := range ptrs {
			if err := checkRoot(ptr, policy); err != nil {
				return fmt.Errorf("patch op %d: %s %q: %w (allowed: %s)", i, op.Op, ptr, err, policy.Description)
			}
		}
	}
	return nil
}

func checkRoot(ptr string, policy RootPolicy) error {
	tokens, err := ParsePointer(ptr)
	switch {
	case err != nil:
		return fmt.Errorf("%w: %w", ErrRootNotAllowed, err)
	case len(tokens) == 0 || tokens[0] == "":
		return fmt.Errorf("%w: empty root (the whole document may not be patched)", ErrRootNotAllowed)
	case policy.Allow == nil || !policy.Allow(tokens[0]):
		return fmt.Errorf("%w: %q", ErrRootNotAllowed, tokens[0])
	}
	return nil
}
