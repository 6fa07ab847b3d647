package layers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// putInPlace are the calls that put a file in place (a temp file renamed
// or linked over a name): applier/atomicfile's job.
var putInPlace = map[string]bool{
	"os.Rename": true, "os.CreateTemp": true, "os.Link": true,
	"syscall.Rename": true, "syscall.Renameat": true, "syscall.Link": true, "syscall.Linkat": true,
}

// ownWriters are the files outside atomicfile that may, and why.
var ownWriters = map[string]string{
	// Relative to a directory descriptor held open, as the directory
	// belongs to someone else (a user's ~/.ssh) or holds keys: no path is
	// looked up twice, which atomicfile's path-based writes cannot promise.
	"agent/ssl/dir.go":                          "descriptor-relative, the agent's keys",
	"applier/types/user/keyfile.go":             "descriptor-relative, in a user's home",
	"applier/types/ssh_authorized_key/write.go": "descriptor-relative, in a user's home",
	// Not a replacement: a lock taken by linking a complete file to a
	// name that must not exist yet.
	"agent/config/lock.go": "a lock: link, never replace",
	// The file atomicfile wrote under a temp name, moved to its entry.
	"applier/filebucket/filebucket.go": "moves atomicfile's file into its entry",
	// A scratch file, unlinked at once: nothing is put in place.
	"applier/command/finish.go": "an unlinked scratch file",
	// Test helpers and benchmarks.
	"internal/testutil/accounts.go": "test helper",
	"bench/e2e/main.go":             "benchmark",
}

// TestOneAtomicWriter: every file pippet writes whole is written through
// applier/atomicfile (temp file, fsync, rename, the directory fsynced),
// not by a temp-and-rename of its own.
func TestOneAtomicWriter(t *testing.T) {
	lines := goList(t, "-f", "{{.Dir}} {{join .GoFiles \" \"}}", "./...")
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var bad []string
	used := map[string]bool{}
	for _, line := range lines {
		f := strings.Fields(line)
		dir := f[0]
		rel, _ := filepath.Rel(root, dir)
		if filepath.ToSlash(rel) == "applier/atomicfile" {
			continue
		}
		for _, name := range f[1:] {
			path := filepath.ToSlash(filepath.Join(rel, name))
			file, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(file, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				pkg, ok := sel.X.(*ast.Ident)
				if !ok || !putInPlace[pkg.Name+"."+sel.Sel.Name] {
					return true
				}
				used[path] = true
				if _, allowed := ownWriters[path]; !allowed {
					bad = append(bad, fset.Position(sel.Pos()).String()+": "+pkg.Name+"."+sel.Sel.Name)
				}
				return true
			})
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Errorf("%s: write the file with applier/atomicfile", b)
	}
	for path := range ownWriters {
		if !used[path] {
			t.Errorf("%s writes no file of its own any more: take it off ownWriters", path)
		}
	}
}
