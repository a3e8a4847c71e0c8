package crd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/addon-operator/addon-operator/pkg/filelimit"
	"github.com/addon-operator/addon-operator/pkg/kube"
)

// skipPrefixes start the names of files in crds/ that are not CRDs
// (documentation, disabled files), as in the reference implementation.
func skipPrefixes() []string { return []string{"doc-", "_"} }

// crdDocument is one CRD to apply.
type crdDocument struct {
	// file is the path it was read from.
	file string
	name string
	// body is the CRD as JSON, without status.
	body []byte
}

// crdLoad reads the CRDs of every CRD file under dir, in lexical path
// order. A missing dir has none.
func crdLoad(dir string) ([]crdDocument, error) {
	files, err := crdFiles(dir)
	if err != nil {
		return nil, err
	}
	var docs []crdDocument
	for _, file := range files {
		data, err := filelimit.ReadFile(file, filelimit.Default)
		if err != nil {
			return nil, err
		}
		found, err := parse(file, data)
		if err != nil {
			return nil, err
		}
		docs = append(docs, found...)
	}
	return docs, nil
}

// crdFiles returns the CRD files under dir: .yaml and .yml files whose
// names do not start with a skip prefix.
func crdFiles(dir string) ([]string, error) {
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || crdSkipped(d.Name()) {
			return nil
		}
		if ext := filepath.Ext(d.Name()); ext == ".yaml" || ext == ".yml" {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return files, nil
}

func crdSkipped(name string) bool {
	for _, prefix := range skipPrefixes() {
		if strings.HasPrefix(name, prefix) {
			return true
		}
	}
	return false
}

// parse returns the CRDs in the multi-document YAML data read from file.
// Empty documents are skipped; any other document that is not an
// apiextensions.k8s.io/v1 CustomResourceDefinition with a name is an error.
func parse(file string, data []byte) ([]crdDocument, error) {
	var docs []crdDocument
	err := kube.EachDocument(bytes.NewReader(data), func(n int, raw []byte) error {
		doc, ok, err := decode(raw)
		if err != nil {
			return fmt.Errorf("document %d: %w", n, err)
		}
		if ok {
			doc.file = file
			docs = append(docs, doc)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return docs, nil
}

// decode decodes one YAML document into a CRD; ok is false for an empty
// document.
func decode(raw []byte) (doc crdDocument, ok bool, err error) {
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return crdDocument{}, false, err
	}
	if bytes.Equal(bytes.TrimSpace(js), []byte("null")) {
		return crdDocument{}, false, nil
	}
	var obj map[string]any
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber() // keeps large integers in schemas exact
	if err := dec.Decode(&obj); err != nil {
		return crdDocument{}, false, fmt.Errorf("not an object: %w", err)
	}
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	if apiVersion != "apiextensions.k8s.io/v1" || kind != "CustomResourceDefinition" {
		return crdDocument{}, false, fmt.Errorf("%s %s is not an apiextensions.k8s.io/v1 CustomResourceDefinition", apiVersion, kind)
	}
	metadata, _ := obj["metadata"].(map[string]any)
	name, _ := metadata["name"].(string)
	if name == "" {
		return crdDocument{}, false, errors.New("CustomResourceDefinition has no name")
	}
	delete(obj, "status") // owned by the API server; applying it would claim its fields
	body, err := json.Marshal(obj)
	if err != nil {
		return crdDocument{}, false, err
	}
	return crdDocument{name: name, body: body}, true, nil
}
