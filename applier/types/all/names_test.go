package all_test

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/pippet/pippet/applier"
	_ "github.com/pippet/pippet/applier/types/all"
)

// accessors are the methods of *applier.Resource and *applier.State that
// take an attribute's name.
var accessors = map[string]bool{
	"Get": true, "Value": true, "Has": true, "Given": true, "String": true, "Bool": true,
	"Int": true, "Strings": true, "Set": true, "SetGiven": true,
}

// TestTypesReadOnlyDeclaredAttributes type-checks every type package and
// finds each call of a Resource or State accessor with a constant name: the
// name must be an attribute that package's type declares. A typo such as
// r.String("mdoe") fails here even when no test reaches the line (the
// accessors also panic at run time on an undeclared name).
func TestTypesReadOnlyDeclaredAttributes(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks every type package")
	}
	root := moduleRoot(t)
	exports := exportData(t, root)
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	checked := 0
	byPackage := registeredByPackage()
	for _, pkg := range typePackages(t, root) {
		if !pkg.isType(root) {
			continue // all, internal helpers: not a type
		}
		name := filepath.Base(pkg.dir)
		registered := byPackage[pkg.importPath(root)]
		if len(registered) == 0 {
			t.Errorf("%s: no type of the package is registered: its accessor calls cannot be checked (see TestEveryTypeRegistered)", pkg.dir)
			continue
		}
		// A package may declare several types (concat_file and
		// concat_fragment): a name is declared when one of them declares it.
		declared := map[string]bool{}
		for _, typ := range registered {
			for _, a := range typ.Attrs {
				declared[a.Name] = true
			}
			if len(typ.Providers) > 1 || len(typ.Providers) == 1 && typ.Providers[0].Name != "" {
				declared["provider"] = true
			}
		}
		files := parseFiles(t, fset, pkg.dir, pkg.files)
		conf := types.Config{Importer: imp}
		info := &types.Info{Selections: map[*ast.SelectorExpr]*types.Selection{}, Types: map[ast.Expr]types.TypeAndValue{}}
		if _, err := conf.Check("github.com/pippet/pippet/applier/types/"+name, fset, files, info); err != nil {
			t.Fatalf("type-checking %s: %v", name, err)
		}
		for _, f := range files {
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) == 0 {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || !accessors[sel.Sel.Name] {
					return true
				}
				s := info.Selections[sel]
				if s == nil || !isAccessorRecv(s.Recv()) {
					return true
				}
				tv := info.Types[call.Args[0]]
				if tv.Value == nil {
					return true // a name computed at run time: the accessors' panic guards it
				}
				attr, err := strconv.Unquote(tv.Value.ExactString())
				if err != nil {
					return true
				}
				checked++
				if !declared[attr] {
					t.Errorf("%s: %s(%q): type %s declares no attribute %q", fset.Position(call.Pos()), sel.Sel.Name, attr, name, attr)
				}
				return true
			})
		}
	}
	t.Logf("%d accessor calls with constant names checked", checked)
	if checked < 100 {
		t.Fatalf("only %d accessor calls found: the scan is broken", checked)
	}
}

func isAccessorRecv(t types.Type) bool {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := t.(*types.Named)
	if !ok || n.Obj().Pkg() == nil || n.Obj().Pkg().Path() != "github.com/pippet/pippet/applier" {
		return false
	}
	return n.Obj().Name() == "Resource" || n.Obj().Name() == "State"
}

type goPackage struct {
	dir   string
	files []string // the non-test Go files of this platform's build
}

// typePackages lists the packages under applier/types with their files.
// TestEveryTypeRegistered: every package under applier/types but all and
// the internal helpers registers at least one type, so that importing
// applier/types/all registers it (a type left out of all.go answers
// "unknown resource type" in the receiver, and escapes the checks of this
// package's tests). A type belongs to the package its providers' New
// functions are declared in.
func TestEveryTypeRegistered(t *testing.T) {
	root := moduleRoot(t)
	byPackage := registeredByPackage()
	n := 0
	for _, pkg := range typePackages(t, root) {
		if !pkg.isType(root) {
			continue
		}
		n++
		if len(byPackage[pkg.importPath(root)]) == 0 {
			t.Errorf("%s: no type of the package is registered: import it in applier/types/all/all.go", pkg.dir)
		}
	}
	if n < 10 {
		t.Fatalf("found %d type packages: the listing is broken", n)
	}
}

// registeredByPackage maps the import path of each type package to the
// registered types whose providers it declares.
func registeredByPackage() map[string][]*applier.Type {
	out := map[string][]*applier.Type{}
	for _, typ := range applier.Default.Types() {
		seen := map[string]bool{}
		for _, p := range typ.Providers {
			if p.New == nil {
				continue
			}
			fn := runtime.FuncForPC(reflect.ValueOf(p.New).Pointer()).Name()
			slash := strings.LastIndex(fn, "/")
			pkg := fn[:slash+1] + strings.SplitN(fn[slash+1:], ".", 2)[0]
			if !seen[pkg] {
				seen[pkg] = true
				out[pkg] = append(out[pkg], typ)
			}
		}
	}
	return out
}

// importPath is the package's import path.
func (p goPackage) importPath(root string) string {
	rel, _ := filepath.Rel(root, p.dir)
	return "github.com/pippet/pippet/" + filepath.ToSlash(rel)
}

// isType reports whether the package is a type's: a directory directly
// under applier/types, neither all nor internal.
func (p goPackage) isType(root string) bool {
	rel, err := filepath.Rel(filepath.Join(root, "applier", "types"), p.dir)
	if err != nil || strings.Contains(rel, string(filepath.Separator)) {
		return false
	}
	return rel != "all" && rel != "internal" && rel != "."
}

func typePackages(t *testing.T, root string) []goPackage {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", "{{.Dir}} {{join .GoFiles \" \"}}", "./applier/types/...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []goPackage
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkgs = append(pkgs, goPackage{dir: f[0], files: f[1:]})
	}
	return pkgs
}

func parseFiles(t *testing.T, fset *token.FileSet, dir string, names []string) []*ast.File {
	t.Helper()
	var files []*ast.File
	for _, n := range names {
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

// exportData maps each dependency of the type packages to its compiled
// export data, as `go list -export` builds it.
func exportData(t *testing.T, root string) map[string]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-export", "-f", "{{.ImportPath}} {{.Export}}", "./applier/types/...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export: %v\n%s", err, stderr.String())
	}
	m := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		path, file, ok := strings.Cut(sc.Text(), " ")
		if ok && file != "" {
			m[path] = file
		}
	}
	return m
}
