package quickstart

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestQuickStartBlocks(t *testing.T) {
	readme := "# x\n```sh\nleft out\n```\n" + beginMarker + " -->\ntext\n```sh\nmake run\n```\n```console\n$ not run\n```\n" +
		"more\n```sh\na \\\n  b\nc\n```\n" + endMarker + "\n```sh\nafter\n```\n"
	got, err := quickStartBlocks(readme)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"make run\n", "a \\\n  b\nc\n"}, got); diff != "" {
		t.Errorf("blocks (-want +got):\n%s", diff)
	}
	if _, err := quickStartBlocks(strings.ReplaceAll(readme, endMarker, "")); err == nil {
		t.Error("a README without the end marker gave blocks")
	}
}
