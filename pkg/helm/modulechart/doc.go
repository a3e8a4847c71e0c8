// Package modulechart loads a module's chart for Helm: from a directory
// with or without Chart.yaml (synthesised then), without the operator's
// own files, with the chart's default values losing the keys the
// operator's values carry; and checks the values it is given against its
// values.schema.json files without the operator's keys the chart does not
// declare.
package modulechart
