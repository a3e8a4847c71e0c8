package kube

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// EachDocument calls fn with every document of the multi-document YAML
// in r, numbered from 1, until fn returns an error or r ends. A document
// that cannot be read is an error naming its number.
func EachDocument(r io.Reader, fn func(n int, doc []byte) error) error {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(r))
	for n := 1; ; n++ {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("document %d: %w", n, err)
		}
		if err := fn(n, doc); err != nil {
			return err
		}
	}
}
