// Command webhookbench measures the admission round trip to the
// operator's webhook server, for a bash hook and a compiled hook, beside
// shell-operator v1.4.12 (built from the Go module proxy) with the same
// bash hook: through a local kube-apiserver and posted to each server
// directly. It prints Markdown tables (see docs/benchmarks.md):
//
//	go run ./e2e/bench/cmd/webhookbench [-requests 400] [-concurrency 1,10] [-shell-operator=false] [-direct=false] [-lang C.UTF-8]
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
	shell := fs.Bool("shell-operator", true, "run shell-operator v1.4.12 (the version the reference v1.5.0 pins, built from e2e/bench/reference with cgo) beside ours with the same bash hook")
	shellBin := fs.String("shell-operator-bin", "", "shell-operator binary to run instead of building v1.4.12")
	keep := fs.Bool("keep", false, "keep the work directory (operator, shell-operator and control-plane logs)")
	direct := fs.Bool("direct", true, "also post AdmissionReviews to each server directly over HTTPS, past the API server")
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
	o := bench.WebhookOptions{Requests: *requests, Concurrency: levels, Direct: *direct}
	if *shell {
		o.ShellOperator = *shellBin
		if o.ShellOperator == "" {
			o.ShellOperator = "build"
		}
	}
	if err := measure(ctx, o, *jq, *lang, *operator, args, *keep); err != nil {
		fmt.Fprintf(os.Stderr, "webhookbench: %v\n", err)
		return 1
	}
	return 0
}

func measure(ctx context.Context, o bench.WebhookOptions, jq, lang, bin string, args []string, keep bool) error {
	fmt.Printf("Load average at the start: %s.\n", bench.LoadAverage())
	dir, err := os.MkdirTemp("", "webhookbench-")
	if err != nil {
		return err
	}
	if keep {
		fmt.Fprintf(os.Stderr, "work directory (kept): %s\n", dir)
	} else {
		defer os.RemoveAll(dir)
	}
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
	if o.ShellOperator == "build" {
		fmt.Fprintln(os.Stderr, "building shell-operator v1.4.12")
		if o.ShellOperator, err = bench.BuildShellOperator(ctx, dir); err != nil {
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
	res, err := bench.RunWebhooks(ctx, env, o)
	if err != nil {
		return err
	}
	fmt.Printf("Machine: %d CPUs; the bash hook's jq: %s; locale: %s; load average at the end: %s.\n\n", runtime.NumCPU(), jqVersion, locale, bench.LoadAverage())
	fmt.Print(bench.WebhookReport(res))
	return nil
}
