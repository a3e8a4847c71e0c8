// Command webhookbench measures the admission round trip through a local
// kube-apiserver to the operator's webhook server, for a bash hook and a
// compiled hook, and prints a Markdown table (see docs/benchmarks.md):
//
//	go run ./e2e/bench/cmd/webhookbench [-requests 400] [-concurrency 1,10] [-lang C.UTF-8]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/addon-operator/addon-operator/e2e/bench"
	"github.com/addon-operator/addon-operator/e2e/cluster"
)

func main() { os.Exit(run()) }

func run() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fs := flag.NewFlagSet("webhookbench", flag.ContinueOnError)
	requests := fs.Int("requests", 400, "requests per hook and concurrency")
	conc := fs.String("concurrency", "1,10", "concurrent requests, comma-separated")
	extra := fs.String("operator-args", "", "arguments appended to the operator's start command line, split on spaces (e.g. --webhook-max-concurrent-runs=4)")
	operator := fs.String("operator", "", "operator binary to measure instead of building ./cmd/addon-operator (e.g. another commit's)")
	jq := fs.String("jq", "", "jq binary the bash hook runs with, put first on the operator's PATH (make bench passes hack/jq/build.sh's jq 1.7.1, the image's); empty: the PATH's jq")
	lang := fs.String("lang", "", "LANG the operator and its hooks run with; empty: no locale variable, as in the operator's image (the caller's LANG and LC_* are not passed on)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return 2
	}
	var levels []int
	for _, s := range strings.Split(*conc, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "webhookbench: -concurrency %q: want positive integers\n", *conc)
			return 2
		}
		levels = append(levels, n)
	}
	args := strings.Fields(*extra)
	if err := bench.CheckOperatorArgs(args); err != nil {
		fmt.Fprintf(os.Stderr, "webhookbench: %v\n", err)
		return 2
	}
	if err := measure(ctx, *requests, levels, *jq, *lang, *operator, args); err != nil {
		fmt.Fprintf(os.Stderr, "webhookbench: %v\n", err)
		return 1
	}
	return 0
}

func measure(ctx context.Context, requests int, levels []int, jq, lang, bin string, args []string) error {
	dir, err := os.MkdirTemp("", "webhookbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	locale, err := bench.UseLocale(lang)
	if err != nil {
		return err
	}
	jqVersion, err := bench.UseJQ(ctx, jq, dir)
	if err != nil {
		return err
	}
	if bin == "" {
		fmt.Fprintln(os.Stderr, "building the operator")
		if bin, err = bench.BuildOperator(ctx, dir); err != nil {
			return err
		}
	}
	cache, err := cluster.DefaultCacheDir()
	if err != nil {
		return err
	}
	bins, err := cluster.Build(ctx, cache, os.Stderr)
	if err != nil {
		return err
	}
	env := bench.Env{Binary: bin, ControlPlane: bins, Dir: dir, Progress: os.Stderr, OperatorArgs: args}
	res, err := bench.RunWebhooks(ctx, env, requests, levels)
	if err != nil {
		return err
	}
	fmt.Printf("Machine: %d CPUs; the bash hook's jq: %s; locale: %s.\n\n", runtime.NumCPU(), jqVersion, locale)
	fmt.Print(bench.WebhookReport(res))
	return nil
}
