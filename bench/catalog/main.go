// Command catalog times `receiver apply` on whole catalogs against
// `puppet apply --catalog` of the same catalogs on the same machine:
//
//   - each real catalog of integration/testdata/catalogs, converged (it is
//     applied once first, unmeasured: the machine is changed as the catalog
//     says — packages, /etc, services — so run it where that is fine);
//   - a generated catalog of 1,000 unchanged files in a temp directory;
//   - start to first resource: a catalog of one file, and one of one
//     delegated resource (Puppet's start; a mailalias, named by
//     --delegate since pippet's is native), and 1,000 files plus one
//     delegated resource (Puppet's start overlapping the native work).
//
// The median of -runs runs is reported, wall time of the whole process.
//
//	go run ./bench/catalog -receiver bin/receiver [-puppet] [-runs 5]
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"time"

	json "github.com/goccy/go-json"
)

var (
	receiver = flag.String("receiver", "bin/receiver", "receiver binary to measure")
	runs     = flag.Int("runs", 5, "runs per scenario (the median is reported)")
	puppet   = flag.Bool("puppet", false, "also time puppet apply --catalog on each scenario")
	real     = flag.Bool("real", true, "include the real catalogs (they change the machine: root only)")
	dir      = flag.String("catalogs", "integration/testdata/catalogs/catalogs", "directory of the real catalogs")
	modules  = flag.String("modulepath", "/usr/share/puppet/modules", "modulepath for the delegated types")
)

var debianPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

func main() {
	flag.Parse()
	bin, err := filepath.Abs(*receiver)
	check(err)
	tmp, err := os.MkdirTemp("", "pippet-bench-catalog-")
	check(err)
	defer os.RemoveAll(tmp)
	state := filepath.Join(tmp, "state")

	// args are the receiver's own for the scenario: mailalias is native,
	// so the delegated scenarios name it with --delegate to have Puppet
	// apply it.
	type scenario struct {
		name, file string
		args       []string
	}
	delegate := []string{"--delegate", "mailalias"}
	var scenarios []scenario
	if *real && os.Geteuid() == 0 {
		for _, n := range []string{"concat", "sysctl", "systemd", "ssh", "rsync_server", "postfix"} {
			scenarios = append(scenarios, scenario{n + " (converged)", filepath.Join(*dir, n+".json"), nil})
		}
	}
	files := filepath.Join(tmp, "files")
	check(os.MkdirAll(files, 0o755))
	scenarios = append(scenarios,
		scenario{"1,000 files unchanged", writeCatalog(tmp, "files1000", files, 1000, false), nil},
		scenario{"start to first resource: 1 file", writeCatalog(tmp, "one", files, 1, false), nil},
		scenario{"start to first resource: 1 delegated", writeCatalog(tmp, "onedelegated", files, 0, true), delegate},
		scenario{"1,000 files + 1 delegated", writeCatalog(tmp, "filesdelegated", files, 1000, true), delegate},
	)
	fmt.Printf("%-40s %14s", "scenario", "receiver apply")
	if *puppet {
		fmt.Printf(" %26s", "puppet apply --catalog")
	}
	fmt.Println()
	for _, s := range scenarios {
		recv := append(append([]string{bin, "apply", "--state-dir", state, "--modulepath", *modules}, s.args...), s.file)
		run(recv) // converge
		r := median(recv, *runs)
		fmt.Printf("%-40s %12.3f s", s.name, r.Seconds())
		if *puppet {
			pup := []string{"puppet", "apply", "--catalog", s.file, "--modulepath", *modules}
			run(pup)
			p := median(pup, max(1, min(*runs, 3)))
			fmt.Printf(" %12.3f s (%5.1fx)", p.Seconds(), p.Seconds()/r.Seconds())
		}
		fmt.Println()
	}
}

// writeCatalog writes a catalog of n files in dir (ten per class, each
// class after the one before), and a delegated resource at the end
// (a notify-free mailalias in a scratch aliases file, which the scenario
// has Puppet apply with --delegate) when delegated.
func writeCatalog(tmp, name, dir string, n int, delegated bool) string {
	type res struct {
		Type       string         `json:"type"`
		Title      string         `json:"title"`
		Tags       []string       `json:"tags"`
		Exported   bool           `json:"exported"`
		Kind       string         `json:"kind"`
		Parameters map[string]any `json:"parameters,omitempty"`
	}
	rs := []res{{Type: "Stage", Title: "main", Kind: "compilable_type"}, {Type: "Class", Title: "main", Kind: "class"}}
	edges := []map[string]string{{"source": "Stage[main]", "target": "Class[main]"}}
	for c := 0; c*10 < n; c++ {
		cl := fmt.Sprintf("C%d", c)
		p := map[string]any{}
		if c > 0 {
			p["require"] = fmt.Sprintf("Class[C%d]", c-1)
		}
		rs = append(rs, res{Type: "Class", Title: cl, Kind: "class", Parameters: p})
		edges = append(edges, map[string]string{"source": "Stage[main]", "target": "Class[" + cl + "]"})
		for i := c * 10; i < min(n, c*10+10); i++ {
			t := filepath.Join(dir, fmt.Sprintf("f%04d", i))
			rs = append(rs, res{Type: "File", Title: t, Kind: "compilable_type",
				Parameters: map[string]any{"ensure": "file", "content": fmt.Sprintf("file %d\n", i), "mode": "0644"}})
			edges = append(edges, map[string]string{"source": "Class[" + cl + "]", "target": "File[" + t + "]"})
		}
	}
	if delegated {
		aliases := filepath.Join(tmp, name+".aliases")
		check(os.WriteFile(aliases, nil, 0o644))
		rs = append(rs, res{Type: "Mailalias", Title: "pippetbench", Kind: "compilable_type",
			Parameters: map[string]any{"recipient": "root", "target": aliases}})
		edges = append(edges, map[string]string{"source": "Class[main]", "target": "Mailalias[pippetbench]"})
	}
	data, err := json.Marshal(map[string]any{"name": "bench", "version": 1, "environment": "production", "resources": rs, "edges": edges})
	check(err)
	p := filepath.Join(tmp, name+".json")
	check(os.WriteFile(p, data, 0o644))
	return p
}

func run(argv []string) time.Duration {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), debianPath)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	d := time.Since(start)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%v: %v\n%s\n", argv, err, out)
	}
	return d
}

func median(argv []string, n int) time.Duration {
	var ds []time.Duration
	for range n {
		ds = append(ds, run(argv))
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2]
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench/catalog:", err)
		os.Exit(1)
	}
}
