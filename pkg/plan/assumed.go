package plan

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/store"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// hookSetSource is the layer of values the values schema declares beyond
// the config schema: what hooks set in the cluster. Offline no hook runs,
// so such a leaf holds its schema default unless --values or --set stand in.
const hookSetSource = "values schema default"

// assumedGlobals are the global values that global hooks set in the
// cluster and that hold only their schema default offline, as
// "path=value" ("global.discovery.nodeCount=0").
func (x *Offline) assumedGlobals() []string {
	var out []string
	for _, l := range store.Explain(x.store.GlobalLayers()) {
		if l.Source != hookSetSource || given(x.globalSet, l.Path) {
			continue
		}
		v, err := json.Marshal(l.Value)
		if err != nil {
			v = []byte(fmt.Sprint(l.Value))
		}
		out = append(out, config.GlobalKey+"."+l.Path+"="+string(v))
	}
	return out
}

// assumedReason is what a module's reason adds when its enabled script ran
// on values global hooks did not set: the operator may decide otherwise.
func assumedReason(assumed []string) string {
	return "offline guess: the script saw " + strings.Join(assumed, ", ") +
		", schema defaults that global hooks set from the cluster (--set stands in)"
}

// scriptsRun records the modules whose enabled scripts ran.
type scriptsRun struct {
	ScriptRunner
	mu  sync.Mutex
	ran map[string]bool
}

func (s *scriptsRun) Run(ctx context.Context, r hook.Run) (*hook.Result, error) {
	s.mu.Lock()
	s.ran[r.Module] = true
	s.mu.Unlock()
	return s.ScriptRunner.Run(ctx, r)
}

// given says whether v holds the dotted path.
func given(v values.Values, path string) bool {
	var cur any = map[string]any(v)
	for _, k := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			vv, isValues := cur.(values.Values)
			if !isValues {
				return false
			}
			m = vv
		}
		if cur, ok = m[k]; !ok {
			return false
		}
	}
	return true
}
