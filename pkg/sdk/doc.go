// Package sdk lets hook authors write hooks in Go: one binary per module
// carries all its hooks, serves --config and the batch protocol, and reads
// and writes the hook protocol's files through typed values instead of jq.
//
// A module's hooks binary:
//
//	func main() {
//		sdk.Main(sdk.Hook{
//			Name:   "defaults",
//			Config: sdk.Config{BeforeHelm: sdk.Order(10)},
//			Run: func(ctx context.Context, in *sdk.Input) error {
//				var replicas int
//				if _, err := in.Values.Decode(&replicas, "myModule", "replicas"); err != nil {
//					return err
//				}
//				in.ValuesPatch.Set(sdk.Pointer("myModule", "internal", "replicas"), max(replicas, 1))
//				return nil
//			},
//		})
//	}
//
// Built into the module's hooks/ directory, the binary answers "hook list",
// "hook config", "hook run <id>" and "hook ready" (the batch protocol the
// operator speaks with native executables), and, when it carries one hook,
// also --config and a run without arguments (the plain hook protocol).
//
// The package depends on the standard library only; it does not import the
// operator.
package sdk
