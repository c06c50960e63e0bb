package overlay

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"
)

// separator is a YAML document separator line.
var separator = regexp.MustCompile(`(?m)^---[ \t]*$`)

// Decode splits a multi-document YAML (or JSON) stream, such as helm
// template's output, a sample file or a catalog, into objects, skipping
// empty documents. Numbers are int64 where they are whole, as the API
// machinery's deep copies expect.
func Decode(stream []byte) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	for _, doc := range separator.Split(string(stream), -1) {
		raw, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			return nil, fmt.Errorf("%w in:\n%s", err, doc)
		}
		var m map[string]any
		if err := utiljson.Unmarshal(raw, &m); err != nil {
			return nil, fmt.Errorf("%w in:\n%s", err, doc)
		}
		if len(m) > 0 {
			objs = append(objs, &unstructured.Unstructured{Object: m})
		}
	}
	return objs, nil
}

// DecodeDir decodes every YAML file in dir, files in name order (Decode).
func DecodeDir(dir string) ([]*unstructured.Unstructured, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []*unstructured.Unstructured
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		objs, err := Decode(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out = append(out, objs...)
	}
	return out, nil
}
