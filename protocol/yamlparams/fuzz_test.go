package yamlparams

import (
	"errors"
	"math"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/pippet/pippet/internal/testutil"
)

// FuzzParse: no input panics; the fast path, when it answers, agrees
// with the general yaml.v3 path; results hold only the documented types.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"{ensure: file, mode: '0644'}", "{ensure: file}", "{}", "ensure: file\ncontent: |\n  a\n  b\n",
		"{a: yes, b: No, c: ~, d: 0644, e: 1:20, f: 1.5, g: .inf, h: 0x1F, i: 1_000}",
		"{a: 'it''s', b: \"q\\n\", c: [1, 2], d: {e: f}}", "{<<: {a: 1}, b: 2}", "[a]", "~", "",
		"{a: &x [1, *x]}", "{a: 2001-12-14}", "{this: will: not: parse}", "{a: !!binary aGk=}",
		"{ ensure : file , owner : root }", "{a: -.5, b: +1, c: 0b1, d: 09, e: '', f: ''''}",
		"{a: b c, d: e#f, g: h #i}", "{a: :sym}", "{'a': b, \"c\": d}",
		"{a: \"\\x41\\u00e9\\U0001F600\\0\\e\\N\\_\\L\\P\\ \\'\\\"\\t\"}", "{a: 'caf\u00e9 \u65e5'}",
		"ensure: file\nmode: '0644'\ncontent: |-\n  a\n    b\towner: \"x\\ny\"\n", "a: |\n  \tx\nb: 1\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		defer testutil.FuzzWatchdog(src)()
		got, err := Parse(src)
		checkEstimate(t, src)
		if fast, ok := fastParams(src); ok {
			slow, serr := parseYAML(src, nil)
			if serr != nil {
				t.Fatalf("fast path accepted %q, yaml.v3 path refused: %v", src, serr)
			}
			if !testutil.EqualValues(fast, slow) {
				t.Fatalf("fast path %#v, yaml.v3 path %#v for %q", fast, slow, src)
			}
		}
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %T is not a *Error: %v", err, err)
			}
			return
		}
		if got == nil {
			t.Fatalf("nil mapping without error for %q", src)
		}
		checkTypes(t, got, 0)
	})
}

// checkEstimate: whatever yaml.v3 builds from src has at most twice the
// estimated nodes (plus one): the estimate is a sound bound.
func checkEstimate(t *testing.T, src []byte) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return
	}
	nodes := countNodes(&doc)
	if est := estimateNodes(src, math.MaxInt); nodes > 2*est+1 {
		t.Fatalf("yaml.v3 built %d nodes, estimate %d for %q", nodes, est, src)
	}
}

func countNodes(n *yaml.Node) int {
	c := 1
	if n.Kind == yaml.DocumentNode {
		c = 0
	}
	for _, e := range n.Content {
		c += countNodes(e)
	}
	return c
}

func checkTypes(t *testing.T, v any, depth int) {
	if depth > MaxDepth+2 {
		t.Fatalf("deeper than the limit")
	}
	switch x := v.(type) {
	case nil, string, int64, float64, bool:
	case []any:
		for _, e := range x {
			checkTypes(t, e, depth+1)
		}
	case map[string]any:
		for _, e := range x {
			checkTypes(t, e, depth+1)
		}
	default:
		t.Fatalf("unexpected type %T", v)
	}
}
