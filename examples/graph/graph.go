package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/pippet/pippet/runner"
)

// Node is one resource of the graph file.
type Node struct {
	// Type is the resource type, e.g. file.
	Type string `yaml:"type"`
	// Title is the resource's title.
	Title string `yaml:"title"`
	// Params is a YAML mapping (or a string holding one). It is passed on
	// as YAML text, so values keep Puppet's YAML 1.1 reading (yes is true).
	Params yaml.Node `yaml:"params"`
	// Require lists references (Type[title]) applied before this one.
	Require []string `yaml:"require"`
}

// Status of one resource after a run.
type Status string

const (
	Changed   Status = "changed"
	Unchanged Status = "unchanged"
	Failed    Status = "failed"
	Skipped   Status = "skipped" // a requirement failed or was skipped
)

// Outcome is what happened to one resource.
type Outcome struct {
	Ref      string
	Status   Status
	Err      error
	Duration time.Duration
}

// Graph is a parsed, checked resource graph.
type Graph struct {
	res  []runner.Resource
	refs []string
	deps [][]int // indexes of each resource's requirements
}

var varRE = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// Expand replaces each ${NAME} of a graph file with lookup(NAME), so that
// one file serves every user (site.yaml writes under
// ${TMPDIR}/pippet-graph-${USER}). Only the braced form is read: a $ of a
// shell command in a param stays as it is. A name lookup does not know is
// an error.
func Expand(data []byte, lookup func(string) (string, bool)) ([]byte, error) {
	var err error
	out := varRE.ReplaceAllFunc(data, func(m []byte) []byte {
		name := string(m[2 : len(m)-1])
		v, ok := lookup(name)
		if !ok && err == nil {
			err = fmt.Errorf("${%s} is not set", name)
		}
		return []byte(v)
	})
	return out, err
}

// Parse reads a YAML list of nodes and checks it: every reference unique,
// every requirement present, no cycle.
func Parse(data []byte) (*Graph, error) {
	var nodes []Node
	if err := yaml.Unmarshal(data, &nodes); err != nil {
		return nil, fmt.Errorf("reading the resource list: %w", err)
	}
	g := &Graph{}
	index := map[string]int{}
	for i, n := range nodes {
		if n.Type == "" || n.Title == "" {
			return nil, fmt.Errorf("resource %d: type and title are required", i+1)
		}
		params, err := paramsText(&n.Params)
		if err != nil {
			return nil, fmt.Errorf("resource %d (%s[%s]): params: %w", i+1, n.Type, n.Title, err)
		}
		r := runner.Resource{Type: n.Type, Title: n.Title, Params: params}
		ref := r.Ref()
		if _, dup := index[ref]; dup {
			return nil, fmt.Errorf("%s is declared twice", ref)
		}
		index[ref] = i
		g.res = append(g.res, r)
		g.refs = append(g.refs, ref)
	}
	g.deps = make([][]int, len(nodes))
	for i, n := range nodes {
		for _, req := range n.Require {
			j, ok := index[normalizeRef(req)]
			if !ok {
				return nil, fmt.Errorf("%s requires %s, which is not declared", g.refs[i], req)
			}
			g.deps[i] = append(g.deps[i], j)
		}
	}
	if cycle := g.findCycle(); cycle != nil {
		return nil, fmt.Errorf("dependency cycle: %s", strings.Join(cycle, " -> "))
	}
	return g, nil
}

// paramsText turns the params node into the YAML text the receiver reads.
func paramsText(n *yaml.Node) (string, error) {
	switch n.Kind {
	case 0:
		return "{}", nil
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "{}", nil
		}
		return n.Value, nil // a string holding the mapping
	case yaml.MappingNode:
		flow(n)
		b, err := yaml.Marshal(n)
		if err != nil {
			return "", err
		}
		return strings.TrimSpace(string(b)), nil
	default:
		return "", errors.New("must be a mapping")
	}
}

// flow makes a node print on one line.
func flow(n *yaml.Node) {
	if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
		n.Style = yaml.FlowStyle
	}
	for _, c := range n.Content {
		flow(c)
	}
}

// normalizeRef writes a reference the way Resource.Ref does.
func normalizeRef(s string) string {
	s = strings.TrimSpace(s)
	i := strings.IndexByte(s, '[')
	if i < 0 || !strings.HasSuffix(s, "]") {
		return s
	}
	r := runner.Resource{Type: s[:i], Title: s[i+1 : len(s)-1]}
	return r.Ref()
}

func (g *Graph) findCycle() []string {
	const (
		white = iota
		grey
		black
	)
	color := make([]int, len(g.res))
	var stack []int
	var visit func(i int) []string
	visit = func(i int) []string {
		color[i] = grey
		stack = append(stack, i)
		for _, j := range g.deps[i] {
			switch color[j] {
			case grey:
				k := slices.Index(stack, j)
				var names []string
				for _, x := range stack[k:] {
					names = append(names, g.refs[x])
				}
				return append(names, g.refs[j])
			case white:
				if c := visit(j); c != nil {
					return c
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[i] = black
		return nil
	}
	for i := range g.res {
		if color[i] == white {
			if c := visit(i); c != nil {
				return c
			}
		}
	}
	return nil
}

// Len is the number of resources.
func (g *Graph) Len() int { return len(g.res) }

// Run applies every resource once its requirements are done, each from its
// own goroutine as a graph engine would; the Runner serializes them on the
// wire. A resource whose requirement failed or was skipped is skipped.
// progress is called once per resource, from one goroutine at a time.
func (g *Graph) Run(ctx context.Context, r runner.Runner, timeout time.Duration, progress func(Outcome)) []Outcome {
	out := make([]Outcome, len(g.res))
	done := make([]chan struct{}, len(g.res))
	for i := range done {
		done[i] = make(chan struct{})
	}
	var mu sync.Mutex // serializes progress
	var wg sync.WaitGroup
	for i := range g.res {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(done[i])
			o := Outcome{Ref: g.refs[i]}
			for _, j := range g.deps[i] {
				<-done[j]
				if s := out[j].Status; s == Failed || s == Skipped {
					o.Status, o.Err = Skipped, fmt.Errorf("requirement %s %s", g.refs[j], s)
				}
			}
			if o.Status == "" {
				start := time.Now()
				actx, cancel := context.WithTimeout(ctx, timeout)
				changed, err := runner.Apply(actx, r, &g.res[i])
				cancel()
				o.Duration = time.Since(start)
				switch {
				case err != nil:
					o.Status, o.Err = Failed, err
				case changed:
					o.Status = Changed
				default:
					o.Status = Unchanged
				}
			}
			out[i] = o
			mu.Lock()
			progress(o)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

// Summary counts outcomes by status.
func Summary(outs []Outcome) map[Status]int {
	m := map[Status]int{}
	for _, o := range outs {
		m[o.Status]++
	}
	return m
}

// printer writes numbered progress lines.
type printer struct {
	w     io.Writer
	total int
	n     int
}

func (p *printer) print(o Outcome) {
	p.n++
	width := len(fmt.Sprint(p.total))
	line := fmt.Sprintf("[%*d/%d] %-9s %s", width, p.n, p.total, o.Status, o.Ref)
	if o.Status != Skipped {
		line += fmt.Sprintf(" (%s)", o.Duration.Round(100*time.Microsecond))
	}
	if o.Err != nil {
		line += ": " + o.Err.Error()
	}
	fmt.Fprintln(p.w, line)
}
