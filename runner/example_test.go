package runner_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pippet/pippet/runner"
)

// A controller finds a resource's current state and reads its properties
// by name, then converges it.
func Example() {
	dir, _ := os.MkdirTemp("", "pippet-example-")
	defer os.RemoveAll(dir)
	motd := filepath.Join(dir, "motd")
	os.WriteFile(motd, []byte("old\n"), 0o600)

	r := runner.New(runner.Options{Command: []string{receiverBin}})
	if err := r.Register(); err != nil {
		fmt.Println(err)
		return
	}
	defer r.Unregister()
	ctx := context.Background()

	f, err := runner.Find(ctx, r, "file", motd)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(f.Ref == "File["+motd+"]", f.Value("ensure"), f.Value("mode"), f.Values()["ensure"])

	changed, err := runner.Apply(ctx, r, &runner.Resource{Type: "file", Title: motd, Params: "{ensure: file, content: \"hello\\n\", mode: '0644'}"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(changed)
	// Output:
	// true file 0600 file
	// true
}
