// Command batchhook is a batch binary for the tests of package hook. It
// speaks the batch protocol by hand: "hook list", "hook config" (the
// versioned object, or with BATCH_FORM=array the older bare array),
// "hook run <id>" and "hook ready", each run writing
// {"op":"add","path":"/m/ran","value":"<id>"} to VALUES_JSON_PATCH_PATH,
// and "hook check" (announced by has_settings_check), which rejects the
// settings in SETTINGS_PATH when replicas is 0 and warns when it is 2, as
// the module SDK's example check does.
// With BATCH_PLAIN=1 it is a plain native hook that refuses "hook list".
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

const first = `{"configVersion":"v1","metadata":{"name":"first","path":"x"},"beforeHelm":5,` +
	`"kubernetes":[{"name":"pods","apiVersion":"v1","kind":"Pod","jqFilter":".metadata.name",` +
	`"executeHookOnEvent":false,"resynchronizationPeriod":"1m"}],"logLevel":"info"}`

const second = `{"configVersion":"v1","metadata":{"name":"second"},"allowFailure":true,` +
	`"schedule":[{"name":"tick","crontab":"*/5 * * * *"}],"settings":{"executionMinInterval":3000000000,"executionBurst":2}}`

const ready = `{"configVersion":"v1","metadata":{"name":"readiness"},"schedule":[{"name":"probe","crontab":"*/15 * * * * *"}]}`

func main() {
	args := strings.Join(os.Args[1:], " ")
	if os.Getenv("BATCH_PLAIN") == "1" {
		if args == "--config" {
			fmt.Println(`{"configVersion":"v1","afterHelm":1}`)
			return
		}
		fmt.Fprintln(os.Stderr, "unknown arguments")
		os.Exit(2)
	}
	switch {
	case args == "hook list":
		fmt.Print("Found 2 items:\n0 - first\n1 - second\n")
	case args == "hook config" && os.Getenv("BATCH_FORM") == "array":
		fmt.Println("[" + first + "," + second + "]")
	case args == "hook config":
		fmt.Println(`{"version":"v1","hooks":[` + first + "," + second + `],"readiness":` + ready + `,"has_settings_check":true}`)
	case args == "hook run 0", args == "hook run 1", args == "hook ready":
		id := os.Args[len(os.Args)-1]
		patch := fmt.Sprintf(`{"op":"add","path":"/m/ran","value":%q}`, id)
		if err := os.WriteFile(os.Getenv("VALUES_JSON_PATCH_PATH"), []byte(patch), 0o600); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	case args == "hook check":
		check()
	default:
		fmt.Fprintf(os.Stderr, "unexpected arguments %q\n", args)
		os.Exit(2)
	}
}

// check answers "hook check" as the module SDK does: exit 0 and nothing
// written when the settings are fine, else exit 1 with the result on stderr.
func check() {
	data, err := os.ReadFile(os.Getenv("SETTINGS_PATH"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var settings struct {
		Replicas *int `json:"replicas"`
	}
	if err := json.Unmarshal(data, &settings); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var result string
	switch {
	case settings.Replicas == nil:
		return
	case *settings.Replicas == 0:
		result = `{"valid":false,"message":"replicas cannot be 0","warnings":null}`
	case *settings.Replicas == 2:
		result = `{"valid":true,"message":"","warnings":["two replicas are not highly available"]}`
	default:
		return
	}
	fmt.Fprintln(os.Stderr, `{"level":"error","msg":"failed to check settings"}`)
	fmt.Fprint(os.Stderr, result+"\n")
	os.Exit(1)
}
