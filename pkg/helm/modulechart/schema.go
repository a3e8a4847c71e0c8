package modulechart

import (
	"encoding/json"
	"fmt"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
)

// validateSchemas checks the values a chart receives against its
// values.schema.json and its subcharts', as Helm does before it renders,
// but with the operator's own keys kept out of the schemas' way.
//
// The chart receives everything: its defaults coalesced under the
// operator's values, {global: <the operator's globals>, <moduleKey>: ...}.
// The schemas see the same values less what only the operator put there
// and the chart never declared: a top-level key of the operator's values
// (the module's values key) that is neither in the chart's values.yaml nor
// a property of its schema nor a subchart's name, and a key of the
// operator's globals (enabledModules, ...) that is neither in the chart's
// (or subchart's) global: defaults nor a property of global in its
// schema; a global: left empty that the chart does not declare goes too.
// So a chart with additionalProperties: false accepts being a module, and
// every key it declares is still checked, the operator's included.
//
// ch must be the chart as Helm rendered it (its dependencies processed:
// disabled subcharts removed, aliases applied) and given the operator's
// values.
func validateSchemas(ch *chart.Chart, given map[string]any) error {
	if !anySchema(ch) {
		return nil
	}
	merged, err := chartutil.CoalesceValues(ch, given)
	if err != nil {
		return fmt.Errorf("coalesce values: %w", err)
	}
	seen, err := CopyValues(merged) // coalescing shares maps with the chart's defaults
	if err != nil {
		return err
	}
	for key := range given {
		if key != globalKey && !declared(ch, key) {
			delete(seen, key)
		}
	}
	operatorGlobals, _ := given[globalKey].(map[string]any)
	hideOperatorGlobals(ch, seen, operatorGlobals)
	if err := chartutil.ValidateAgainstSchema(ch, seen); err != nil {
		return fmt.Errorf("values don't meet the specifications of the schema(s) in the following chart(s):\n%w", err)
	}
	return nil
}

// anySchema reports whether ch or one of its subcharts has a
// values.schema.json.
func anySchema(ch *chart.Chart) bool {
	if len(ch.Schema) > 0 {
		return true
	}
	for _, sub := range ch.Dependencies() {
		if anySchema(sub) {
			return true
		}
	}
	return false
}

// declared reports whether ch knows a top-level key: its values.yaml holds
// it, its schema names it as a property, or a subchart is named so.
func declared(ch *chart.Chart, key string) bool {
	if _, ok := ch.Values[key]; ok {
		return true
	}
	if _, ok := schemaProperties(ch.Schema)[key]; ok {
		return true
	}
	for _, sub := range ch.Dependencies() {
		if sub.Name() == key {
			return true
		}
	}
	return false
}

// hideOperatorGlobals removes from vals' global: (the values of ch) the
// operator's globals that ch does not know, then does the same in every
// subchart's values, which Helm gave a copy of the globals.
func hideOperatorGlobals(ch *chart.Chart, vals, operatorGlobals map[string]any) {
	if global, ok := vals[globalKey].(map[string]any); ok {
		defaults, _ := ch.Values[globalKey].(map[string]any)
		props, _ := schemaProperties(ch.Schema)[globalKey].(map[string]any)
		known := schemaProperties(props)
		for key := range operatorGlobals {
			_, inDefaults := defaults[key]
			_, inSchema := known[key]
			if !inDefaults && !inSchema {
				delete(global, key)
			}
		}
		if len(global) == 0 && !declared(ch, globalKey) {
			delete(vals, globalKey)
		}
	}
	for _, sub := range ch.Dependencies() {
		if subVals, ok := vals[sub.Name()].(map[string]any); ok {
			hideOperatorGlobals(sub, subVals, operatorGlobals)
		}
	}
}

// schemaProperties returns the properties of a JSON schema, given as its
// document or as a decoded object; nil when it has none or is not an
// object.
func schemaProperties(schema any) map[string]any {
	var doc map[string]any
	switch s := schema.(type) {
	case []byte:
		if len(s) == 0 || json.Unmarshal(s, &doc) != nil {
			return nil
		}
	case map[string]any:
		doc = s
	default:
		return nil
	}
	props, _ := doc["properties"].(map[string]any)
	return props
}

// Validate checks a fresh copy of values against the schemas of ch (see
// validateSchemas).
func Validate(ch *chart.Chart, values map[string]any) error {
	vals, err := CopyValues(values)
	if err != nil {
		return err
	}
	return validateSchemas(ch, vals)
}

// CopyValues returns a deep copy of values made of plain JSON types, which
// is what Helm's value coalescing expects (and what it would read from a
// values file).
func CopyValues(values map[string]any) (map[string]any, error) {
	raw, err := json.Marshal(values)
	if err != nil {
		return nil, fmt.Errorf("encode values: %w", err)
	}
	out := map[string]any{}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("decode values: %w", err)
	}
	return out, nil
}
