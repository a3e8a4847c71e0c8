// Package schema holds a section's OpenAPI schemas (a module's or the
// global section's openapi/config-values.yaml and openapi/values.yaml):
// it loads them (x-extend, local refs, closed objects, x-required-for-helm),
// applies their defaults, validates config values, values and helm values
// against them (CEL rules through pkg/values/cel included) and finds the
// values they mark sensitive.
package schema
