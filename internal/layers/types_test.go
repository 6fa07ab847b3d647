package layers

import (
	"sort"
	"strings"
	"testing"
)

// typePackage reports whether p is a type's package: directly under
// applier/types, neither all nor internal.
func typePackage(p string) bool {
	rest, ok := strings.CutPrefix(p, module+"applier/types/")
	return ok && !strings.Contains(rest, "/") && rest != "all" && rest != "internal"
}

func TestNoTypeImportsAType(t *testing.T) {
	pkgs := imports(t, "./applier/types/...")
	var types int
	var bad []string
	for p, imps := range pkgs {
		if !typePackage(p) {
			continue
		}
		types++
		for _, i := range imps {
			if typePackage(i) {
				bad = append(bad, p+" imports "+i)
			}
		}
	}
	if types < 20 {
		t.Fatalf("found %d type packages under applier/types", types)
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Errorf("%s: what two types share belongs in a shared package", b)
	}
}
