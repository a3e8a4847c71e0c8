package operator

import (
	"context"

	"github.com/addon-operator/addon-operator/pkg/binding"
	"github.com/addon-operator/addon-operator/pkg/runner"
)

// parkedConfigs reads hooks' configurations through r with each process
// (--config, a batch binary's configuration) parked (runner.Park): on a
// module run's step, as when a module's hooks load at its first run after
// a failed load at startup, the step's worker is free for other modules
// while they print it. On any other context (startup, on main) the
// processes run in place.
type parkedConfigs struct{ r hookRunner }

// Config runs the hook at path with --config.
func (p parkedConfigs) Config(ctx context.Context, path string) ([]byte, error) {
	var out []byte
	err := runner.Park(ctx, func(ctx context.Context) error {
		var err error
		out, err = p.r.Config(ctx, path)
		return err
	})
	return out, err
}

// BatchConfig returns the configuration of the batch binary at path; nil
// when it is not one, or when r recognises none.
func (p parkedConfigs) BatchConfig(ctx context.Context, path string) ([]byte, error) {
	batches, ok := p.r.(binding.BatchReader)
	if !ok {
		return nil, nil
	}
	var out []byte
	err := runner.Park(ctx, func(ctx context.Context) error {
		var err error
		out, err = batches.BatchConfig(ctx, path)
		return err
	})
	return out, err
}
