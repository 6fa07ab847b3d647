package layers

import (
	"bytes"
	"os/exec"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/pippet/pippet/"

// goList runs `go list` with args in the module and returns its lines.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// imports maps each package matched by pattern to what its non-test
// files import.
func imports(t *testing.T, pattern string) map[string][]string {
	t.Helper()
	m := map[string][]string{}
	for _, line := range goList(t, "-f", "{{.ImportPath}} {{join .Imports \" \"}}", pattern) {
		f := strings.Fields(line)
		m[f[0]] = f[1:]
	}
	return m
}

func TestApplierImportsNoAgent(t *testing.T) {
	deps := goList(t, "-deps", "./applier/...")
	if len(deps) < 10 {
		t.Fatalf("go list -deps ./applier/... listed %d packages: %q", len(deps), deps)
	}
	var bad []string
	for _, p := range deps {
		if p == module+"agent" || strings.HasPrefix(p, module+"agent/") {
			bad = append(bad, p)
		}
	}
	if len(bad) > 0 {
		t.Errorf("applier depends on %s; facts and TLS configurations are handed in instead", strings.Join(bad, ", "))
	}
}

func TestOneJSONLibrary(t *testing.T) {
	pkgs := imports(t, "./...")
	if len(pkgs) < 50 {
		t.Fatalf("go list ./... listed %d packages", len(pkgs))
	}
	var bad []string
	for p, imps := range pkgs {
		for _, i := range imps {
			if i == "encoding/json" {
				bad = append(bad, p)
			}
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Errorf("%s imports encoding/json outside its tests: use github.com/goccy/go-json", b)
	}
}
