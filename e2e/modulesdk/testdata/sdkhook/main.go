// Command sdkhook is a batch binary as the module SDK builds them, for the
// tests of package modulesdk: one hook (beforeHelm), a readiness probe
// every second and a settings check, spoken by hand. The probe passes once
// a file named "ready" is next to the binary and fails before, as an SDK
// probe does: exit 1 and {"message":"execute: ..."} on stderr. The check
// rejects replicas: 0 with "replicas cannot be 0", and takes holdSeconds
// seconds when the settings ask for it, as a check that reads the cluster
// might.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

const config = `{"version":"v1","hooks":[{"configVersion":"v1","metadata":{"name":"marker","path":"hooks"},"beforeHelm":1}],` +
	`"readiness":{"configVersion":"v1","metadata":{"name":"readiness","path":"common-hooks/readiness"},` +
	`"schedule":[{"name":"sdk-moduleReadinessSchedule","crontab":"*/1 * * * * *"}]},"has_settings_check":true}`

func main() {
	switch strings.Join(os.Args[1:], " ") {
	case "hook list":
		fmt.Print("Found 1 items:\n0 - marker\n")
	case "hook config":
		fmt.Println(config)
	case "hook run 0":
	case "hook ready":
		self, err := os.Executable()
		if err == nil {
			_, err = os.Stat(filepath.Join(filepath.Dir(self), "ready"))
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, `{"message":"execute: pods not ready"}`)
			os.Exit(1)
		}
	case "hook check":
		check()
	default:
		fmt.Fprintln(os.Stderr, "unknown arguments")
		os.Exit(2)
	}
}

func check() {
	data, err := os.ReadFile(os.Getenv("SETTINGS_PATH"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var settings struct {
		Replicas    *int `json:"replicas"`
		HoldSeconds int  `json:"holdSeconds"`
	}
	if err := json.Unmarshal(data, &settings); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	time.Sleep(time.Duration(settings.HoldSeconds) * time.Second)
	if settings.Replicas != nil && *settings.Replicas == 0 {
		fmt.Fprintln(os.Stderr, `{"valid":false,"message":"replicas cannot be 0","warnings":null}`)
		os.Exit(1)
	}
}
