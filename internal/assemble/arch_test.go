package assemble

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOneEngineNew: New is the one place a run's engine is made; no
// other package of the module (but the type authors' test harness,
// applier/typetest) calls engine.New.
func TestOneEngineNew(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	var calls []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		dir := filepath.Dir(rel)
		if dir == "internal/assemble" || dir == "applier/typetest" || dir == "applier/engine" {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		engineName := ""
		for _, imp := range f.Imports {
			if imp.Path.Value == `"github.com/pippet/pippet/applier/engine"` {
				engineName = "engine"
				if imp.Name != nil {
					engineName = imp.Name.Name
				}
			}
		}
		if engineName == "" {
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "New" {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == engineName {
					calls = append(calls, rel)
				}
			}
			return true
		})
		return nil
	})
	require.NoError(t, err)
	assert.Empty(t, calls, "engine.New outside internal/assemble")
}
