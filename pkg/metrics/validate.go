package metrics

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/prometheus/common/model"
)

// check validates m as Apply needs it and returns the JSON field at fault
// with the problem.
func (m *HookMetric) check() (string, error) {
	if !known(m.Action) {
		return "action", fmt.Errorf("unknown action %q (want add, set, observe or expire)", m.Action)
	}
	if m.Action == ActionExpire {
		if m.Group == "" {
			return "group", errors.New(`required for action "expire"`)
		}
		return "", nil
	}
	if m.Name == "" {
		return "name", fmt.Errorf("required for action %q", m.Action)
	}
	if !model.LegacyValidation.IsValidMetricName(m.Name) {
		return "name", fmt.Errorf("invalid metric name %q (want [a-zA-Z_:][a-zA-Z0-9_:]*)", m.Name)
	}
	for _, k := range slices.Sorted(maps.Keys(m.Labels)) {
		switch {
		case !model.LegacyValidation.IsValidLabelName(k) || strings.HasPrefix(k, "__"):
			return "labels", fmt.Errorf("invalid label name %q (want [a-zA-Z_][a-zA-Z0-9_]*, no leading __)", k)
		case k == "le" && m.Action == ActionObserve:
			return "labels", errors.New(`label "le" is reserved for histogram buckets`)
		case !utf8.ValidString(m.Labels[k]):
			return "labels", fmt.Errorf("label %q: value is not valid UTF-8", k)
		}
	}
	switch m.Action {
	case ActionAdd:
		if m.Value < 0 || math.IsNaN(m.Value) || math.IsInf(m.Value, 0) {
			return "value", fmt.Errorf("a counter only grows: want a finite number >= 0, got %v", m.Value)
		}
	case ActionObserve:
		if math.IsNaN(m.Value) {
			return "value", errors.New("cannot observe NaN")
		}
		for i, b := range m.Buckets {
			if math.IsNaN(b) || math.IsInf(b, 0) || (i > 0 && b <= m.Buckets[i-1]) {
				return "buckets", fmt.Errorf("want finite, strictly increasing bounds, got %v", m.Buckets)
			}
		}
	}
	return "", nil
}
