package main

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/mock"
	"github.com/pippet/pippet/runner"
)

func TestParseErrors(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"not a list", "type: file\n", "reading the resource list"},
		{"no title", "- type: notify\n", "resource 1: type and title are required"},
		{"twice", "- {type: notify, title: a}\n- {type: Notify, title: a}\n", "Notify[a] is declared twice"},
		{"unknown requirement", "- {type: notify, title: a, require: ['File[/x]']}\n", "Notify[a] requires File[/x], which is not declared"},
		{"cycle", "- {type: notify, title: a, require: ['Notify[c]']}\n- {type: notify, title: b, require: ['Notify[a]']}\n- {type: notify, title: c, require: ['notify[b]']}\n",
			"dependency cycle: Notify[a] -> Notify[c] -> Notify[b] -> Notify[a]"},
		{"self", "- {type: notify, title: a, require: ['Notify[a]']}\n", "dependency cycle: Notify[a] -> Notify[a]"},
		{"params a list", "- {type: notify, title: a, params: [1, 2]}\n", "resource 1 (notify[a]): params: must be a mapping"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestParamsKeepTheirYAML(t *testing.T) {
	g, err := Parse([]byte(`
- type: file
  title: /x
  params:
    ensure: file
    mode: "0644"
    replace: yes
    content: "a\nb"
    tag: [one, two]
- {type: notify, title: s, params: "{message: as a string}"}
- {type: notify, title: none}
`))
	require.NoError(t, err)
	assert.Equal(t, `{ensure: file, mode: "0644", replace: yes, content: "a\nb", tag: [one, two]}`, g.res[0].Params,
		"plain yes stays plain, so the receiver reads it as YAML 1.1 does")
	assert.Equal(t, "{message: as a string}", g.res[1].Params)
	assert.Equal(t, "{}", g.res[2].Params)
}

func siteGraph(t *testing.T) *Graph {
	t.Helper()
	data, err := os.ReadFile("site.yaml")
	require.NoError(t, err)
	data, err = Expand(data, func(name string) (string, bool) {
		return map[string]string{"TMPDIR": "/tmp", "USER": "x"}[name], name == "TMPDIR" || name == "USER"
	})
	require.NoError(t, err)
	g, err := Parse(data)
	require.NoError(t, err)
	return g
}

func TestExpand(t *testing.T) {
	env := map[string]string{"TMPDIR": "/var/tmp", "USER": "ann"}
	lookup := func(name string) (string, bool) { v, ok := env[name]; return v, ok }
	out, err := Expand([]byte("title: ${TMPDIR}/g-${USER}\ncommand: echo $USER $1 ${}\n"), lookup)
	require.NoError(t, err)
	assert.Equal(t, "title: /var/tmp/g-ann\ncommand: echo $USER $1 ${}\n", string(out))
	_, err = Expand([]byte("title: ${NOPE}/x"), lookup)
	assert.EqualError(t, err, "${NOPE} is not set")
}

func TestRunAppliesInDependencyOrder(t *testing.T) {
	g := siteGraph(t)
	m := &mock.Runner{Respond: func(req runner.Resource) mock.Reply {
		r := mock.Changed()
		r.Delay = time.Millisecond // let goroutines interleave
		return r
	}}
	defer m.Close()
	var seen []string
	outs := g.Run(context.Background(), m, time.Second, func(o Outcome) { seen = append(seen, o.Ref) })
	require.Len(t, outs, g.Len())
	for _, o := range outs {
		assert.Equal(t, Changed, o.Status, o.Ref)
		assert.NoError(t, o.Err)
	}
	assert.Len(t, seen, g.Len(), "one progress line per resource")

	var order []string
	for _, r := range m.Requests() {
		order = append(order, r.Ref())
	}
	require.Len(t, order, g.Len(), "each resource applied once")
	for i, deps := range g.deps {
		at := slices.Index(order, g.refs[i])
		for _, j := range deps {
			assert.Less(t, slices.Index(order, g.refs[j]), at, "%s before %s", g.refs[j], g.refs[i])
		}
	}
}

func TestRunSkipsWhatFailedRequirementsNeed(t *testing.T) {
	g := siteGraph(t)
	m := &mock.Runner{Respond: func(req runner.Resource) mock.Reply {
		switch req.Title {
		case "/tmp/pippet-graph-x/app.conf":
			return mock.Failed("Could not write: disk full")
		case "hello":
			return mock.Unchanged()
		}
		return mock.Changed()
	}}
	defer m.Close()
	outs := g.Run(context.Background(), m, time.Second, func(Outcome) {})
	status := map[string]Status{}
	for _, o := range outs {
		status[o.Ref] = o.Status
	}
	assert.Equal(t, map[string]Status{
		"File[/tmp/pippet-graph-x]":          Changed,
		"File[/tmp/pippet-graph-x/motd]":     Changed,
		"File[/tmp/pippet-graph-x/app.conf]": Failed,
		"Exec[write version]":                Changed,
		"Exec[check config]":                 Skipped,
		"Notify[done]":                       Skipped,
		"Notify[hello]":                      Unchanged,
	}, status)
	assert.Equal(t, map[Status]int{Changed: 3, Unchanged: 1, Failed: 1, Skipped: 2}, Summary(outs))
	for _, r := range m.Requests() {
		assert.NotEqual(t, "check config", r.Title, "a skipped resource is never sent")
	}
	for _, o := range outs {
		if o.Ref == "Notify[done]" {
			assert.EqualError(t, o.Err, "requirement Exec[check config] skipped")
		}
	}
}

func TestRunHonoursTheDeadline(t *testing.T) {
	g, err := Parse([]byte("- {type: notify, title: slow}\n- {type: notify, title: after, require: ['Notify[slow]']}\n"))
	require.NoError(t, err)
	m := &mock.Runner{Script: []mock.Reply{{Wait: make(chan struct{}), Answer: &runner.Result{Changed: true}}}}
	defer m.Close()
	start := time.Now()
	outs := g.Run(context.Background(), m, 100*time.Millisecond, func(Outcome) {})
	assert.Less(t, time.Since(start), 2*time.Second)
	assert.Equal(t, Failed, outs[0].Status)
	assert.ErrorIs(t, outs[0].Err, runner.ErrNoAnswer)
	assert.Equal(t, Skipped, outs[1].Status)
}

func TestPrinter(t *testing.T) {
	var b strings.Builder
	p := &printer{w: &b, total: 12}
	p.print(Outcome{Ref: "File[/x]", Status: Changed, Duration: 1234 * time.Microsecond})
	p.print(Outcome{Ref: "Notify[y]", Status: Skipped, Err: assert.AnError})
	assert.Equal(t, "[ 1/12] changed   File[/x] (1.2ms)\n[ 2/12] skipped   Notify[y]: "+assert.AnError.Error()+"\n", b.String())
}
