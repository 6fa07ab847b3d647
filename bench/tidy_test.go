package bench

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/pippet/pippet/protocol"
)

// tidyTree is a tree of 100,000 fresh files (100 directories of 1,000),
// made once per benchmark process.
var tidyTree = sync.OnceValues(func() (string, error) {
	root, err := os.MkdirTemp("", "pippet-tidy-bench-")
	if err != nil {
		return "", err
	}
	for d := 0; d < 100; d++ {
		dir := filepath.Join(root, "d"+strconv.Itoa(d))
		if err := os.Mkdir(dir, 0o755); err != nil {
			return "", err
		}
		for f := 0; f < 1000; f++ {
			fh, err := os.Create(filepath.Join(dir, "f"+strconv.Itoa(f)))
			if err != nil {
				return "", err
			}
			fh.Close()
		}
	}
	return root, nil
})

// BenchmarkTidyUnchanged is one tidy request over 100,000 files none of
// which is old: the walk through descriptors judging every entry, no
// removal. BenchmarkTidyFloor is the same tree walked by filepath.WalkDir
// with an lstat of every entry, the least any tidy must do.
func BenchmarkTidyUnchanged(b *testing.B) {
	root, err := tidyTree()
	if err != nil {
		b.Fatal(err)
	}
	e := newEngine(b)
	req := &protocol.Request{Type: "tidy", Title: root, Params: map[string]any{"age": "1w", "recurse": true}}
	b.ReportAllocs()
	for b.Loop() {
		res := e.Apply(context.Background(), req)
		if res.Failed || res.Changed {
			b.Fatalf("%+v", res)
		}
	}
}

func BenchmarkTidyFloor(b *testing.B) {
	root, err := tidyTree()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if _, err := os.Lstat(p); err != nil {
				return err
			}
			n++
			return nil
		})
		if err != nil || n != 100101 {
			b.Fatal(err, n)
		}
	}
}
