package cel

import (
	"fmt"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/ext"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/cel/environment"
)

// envs are the two environments rules compile in: oldSelf is a value in
// the first and an optional in the second, for rules with
// optionalOldSelf.
type envs struct {
	plain, optionalOld *cel.Env
}

// sharedEnvs are built once, at the first schema with rules, and shared
// by every Compile: an environment is immutable and safe for concurrent
// use, like a compiled regexp, and building one costs milliseconds.
var sharedEnvs = sync.OnceValues(newEnvs) //nolint:gochecknoglobals // an immutable CEL environment built once, as a compiled regexp is (STYLE 3)

// newEnvs builds the API server's own environment for new expressions at
// its default compatibility version: Kubernetes' libraries (lists, regex,
// urls, quantity, ip, cidr, format, semver), cel-go's strings, sets,
// lists and two-variable comprehensions at the versions the API server
// pins, and its cost estimator, so that library calls count against the
// limits. self and oldSelf are untyped, as module schemas need not be
// structural; cel-go's math extension is added, as this operator offered
// it before.
func newEnvs() (envs, error) {
	base := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion())
	extend := func(oldSelf *cel.Type) (*cel.Env, error) {
		set, err := base.Extend(environment.VersionedOptions{
			IntroducedVersion: version.MajorMinor(1, 0),
			EnvOptions: []cel.EnvOption{
				cel.Variable(selfVar, cel.DynType),
				cel.Variable(oldSelfVar, oldSelf),
				ext.Math(),
			},
		})
		if err != nil {
			return nil, fmt.Errorf("cel environment: %w", err)
		}
		return set.NewExpressionsEnv(), nil
	}
	plain, err := extend(cel.DynType)
	if err != nil {
		return envs{}, err
	}
	optionalOld, err := extend(cel.OptionalType(cel.DynType))
	if err != nil {
		return envs{}, err
	}
	return envs{plain: plain, optionalOld: optionalOld}, nil
}

// Variable names, as the API server names them.
const (
	selfVar    = "self"
	oldSelfVar = "oldSelf"
)
