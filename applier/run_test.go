package applier_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
)

type oneFile string

func (f oneFile) Managed(typ, title string) bool { return typ == "file" && title == string(f) }
func (f oneFile) Resources(typ string) []applier.RunResource {
	if typ != "file" {
		return nil
	}
	return []applier.RunResource{{Type: "file", Title: string(f)}}
}

func TestRunTravelsInTheContext(t *testing.T) {
	require.Nil(t, applier.RunFrom(context.Background()), "a request applied alone has no run")
	ctx := applier.WithRun(context.Background(), oneFile("/etc/a"))
	run := applier.RunFrom(ctx)
	require.NotNil(t, run)
	require.True(t, run.Managed("file", "/etc/a"))
	require.False(t, run.Managed("file", "/etc/b"))
	require.Len(t, run.Resources("file"), 1)
}

func TestRunSet(t *testing.T) {
	reg := applier.NewRegistry()
	reg.Add(&applier.Type{Name: "widget", Attrs: []*applier.Attr{
		{Name: "label", Behaviour: applier.Namevar},
		{Name: "ensure", Behaviour: applier.Property},
	}})
	rs, err := applier.NewRunSet(reg, []applier.RunResource{
		{Type: "File", Title: "/etc/app/", Params: map[string]any{}},
		{Type: "file", Title: "conf", Params: map[string]any{"path": "/etc/app/conf", "alias": []any{"appconf"}}},
		{Type: "widget", Title: "w1", Params: map[string]any{"label": "the widget"}},
		{Type: "mailalias", Title: "root", Params: map[string]any{"name": "postmaster", "alias": "pm"}},
		{Type: "concat_fragment", Title: "b"},
		{Type: "concat_fragment", Title: "a"},
	})
	require.NoError(t, err)
	var run applier.Run = rs
	for _, c := range []struct {
		typ, title string
		want       bool
	}{
		{"file", "/etc/app", true}, {"file", "/etc/app/", true}, {"File", "/etc/app//", true},
		{"file", "conf", true}, {"file", "/etc/app/conf", true}, {"file", "/etc/app/./conf", true}, {"file", "appconf", true},
		{"file", "/etc/app/other", false}, {"file", "/etc", false},
		{"widget", "w1", true}, {"widget", "the widget", true}, {"widget", "w2", false},
		{"mailalias", "root", true}, {"mailalias", "postmaster", true}, {"mailalias", "pm", true},
		{"exec", "root", false},
	} {
		require.Equal(t, c.want, run.Managed(c.typ, c.title), "%s[%s]", c.typ, c.title)
	}
	frags := run.Resources("Concat_fragment")
	require.Len(t, frags, 2)
	require.Equal(t, "b", frags[0].Title, "in the order declared")
	require.Equal(t, "file", run.Resources("file")[0].Type, "types in lower case")
	require.Nil(t, run.Resources("exec"))
	require.Equal(t, 6, rs.Len())
	// Every resource, in the order declared, whatever its type (what a
	// delegated resource sees of its catalog).
	var lister applier.RunLister = rs
	var all []string
	for _, r := range lister.All() {
		all = append(all, r.Type+"["+r.Title+"]")
	}
	require.Equal(t, []string{"file[/etc/app/]", "file[conf]", "widget[w1]", "mailalias[root]", "concat_fragment[b]", "concat_fragment[a]"}, all)
}

// Two resources that are one are refused, as a catalog refuses them, the
// error naming the second.
func TestRunSetDuplicates(t *testing.T) {
	for _, c := range []struct {
		name  string
		rs    []applier.RunResource
		title string
		msg   string
	}{
		{"same title", []applier.RunResource{{Type: "file", Title: "/a"}, {Type: "File", Title: "/a"}}, "/a", "File[/a]: declared twice"},
		{"a path twice", []applier.RunResource{{Type: "file", Title: "/a/"}, {Type: "file", Title: "/a"}}, "/a", `File[/a]: declared twice: "/a" names File[/a/] too`},
		{"a namevar", []applier.RunResource{{Type: "file", Title: "x", Params: map[string]any{"path": "/a"}}, {Type: "file", Title: "/a"}}, "/a", `File[/a]: declared twice: "/a" names File[x] too`},
		{"an alias", []applier.RunResource{{Type: "host", Title: "a"}, {Type: "host", Title: "b", Params: map[string]any{"alias": "a"}}}, "b", `Host[b]: declared twice: "a" names Host[a] too`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := applier.NewRunSet(nil, c.rs)
			var re *applier.RunError
			require.ErrorAs(t, err, &re)
			require.Equal(t, c.title, re.Title)
			require.Equal(t, c.msg, err.Error())
		})
	}
	// Its own name twice is one resource.
	_, err := applier.NewRunSet(nil, []applier.RunResource{{Type: "host", Title: "a", Params: map[string]any{"alias": "a", "name": "a"}}})
	require.NoError(t, err)
	// The same title in two types is two resources.
	_, err = applier.NewRunSet(nil, []applier.RunResource{{Type: "host", Title: "a"}, {Type: "file", Title: "a"}})
	require.NoError(t, err)
}
