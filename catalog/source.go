package catalog

import (
	"os"
	"path/filepath"
	"strings"
)

// ModuleFiles maps `puppet:///modules/MODULE/PATH` (a URL with no server
// of its own) to MODULE/files/PATH in the first directory of modulepath
// that has it, as `puppet apply` serves such sources without a Puppet
// Server. Other URLs, and a file no module has, are left alone (the
// file's own source handling then answers for them).
func ModuleFiles(modulepath []string) func(url string) (string, bool) {
	return func(url string) (string, bool) {
		rest, ok := strings.CutPrefix(url, "puppet:///modules/")
		if !ok {
			return "", false
		}
		mod, rel, ok := strings.Cut(rest, "/")
		if !ok || mod == "" || rel == "" || strings.Contains(mod, "..") {
			return "", false
		}
		clean := filepath.Clean("/" + rel)
		for _, dir := range modulepath {
			p := filepath.Join(dir, mod, "files", clean)
			if _, err := os.Stat(p); err == nil {
				return p, true
			}
		}
		return "", false
	}
}

// mapSources rewrites a source parameter's URLs through f.
func mapSources(v any, f func(string) (string, bool)) any {
	switch x := v.(type) {
	case string:
		if p, ok := f(x); ok {
			return p
		}
		return x
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = mapSources(e, f)
		}
		return out
	}
	return v
}
