// Command gohook is the bench's compiled hook, written with pkg/sdk: the
// same work as the bench's bash+jq beforeHelm hook (read the module's
// config value, set fromHook to "hook-" + it). BENCH_MODULE names the
// module key.
package main

import (
	"context"
	"errors"
	"os"

	"github.com/addon-operator/addon-operator/pkg/sdk"
)

func main() {
	key := os.Getenv("BENCH_MODULE")
	sdk.Main(sdk.Hook{
		Name:   "before-helm",
		Config: sdk.Config{BeforeHelm: sdk.Order(10)},
		Run: func(_ context.Context, in *sdk.Input) error {
			var config string
			ok, err := in.Values.Decode(&config, key, "config")
			if err != nil {
				return err
			}
			if !ok {
				return errors.New("no config value")
			}
			in.ValuesPatch.Set(sdk.Pointer(key, "fromHook"), "hook-"+config)
			return nil
		},
	})
}
