package schema

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/addon-operator/addon-operator/pkg/filelimit"
)

// TestLoadSchemasOversized refuses a schema over the limit before parsing
// it, naming the file and its size.
func TestLoadSchemasOversized(t *testing.T) {
	big := "type: object\ndescription: " + strings.Repeat("x", filelimit.Default) + "\n"
	path := filepath.Join(t.TempDir(), "config-values.yaml")
	if err := os.WriteFile(path, []byte(big), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadSchemas(path, "")
	var tl *filelimit.TooLargeError
	if !errors.As(err, &tl) {
		t.Fatalf("LoadSchemas: %v, want a *filelimit.TooLargeError", err)
	}
	want := path + ": " + strconv.Itoa(len(big)) + " bytes, over the limit of " + strconv.Itoa(filelimit.Default)
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not contain %q", err, want)
	}
}
