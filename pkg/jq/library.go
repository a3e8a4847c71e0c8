package jq

import (
	"os"
	"path/filepath"
	"sync"
)

// LibraryPathEnv names the directory (or directories, separated as in
// PATH) that jq filters of hook configs and JQPatch operations import jq
// modules from, as "jq -L DIR" does; the established shell-operator reads
// the same variable. Hooks inherit it with the rest of the operator's
// environment, for their own "jq -L".
const LibraryPathEnv = "JQ_LIBRARY_PATH"

// LibraryPaths returns the directories of JQ_LIBRARY_PATH, read once, in
// the order given; empty entries are dropped.
//
//nolint:gochecknoglobals // the process environment, read once
var LibraryPaths = sync.OnceValue(func() []string {
	return libraryPaths(os.Getenv(LibraryPathEnv))
})

func libraryPaths(v string) []string {
	var out []string
	for _, p := range filepath.SplitList(v) {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}
