package cron_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/types/cron"
	"github.com/pippet/pippet/applier/typetest"
)

// The listing of a real crontab: named jobs by name (the last of a
// repeated name), unnamed ones as Puppet titles them, each with the
// state a find reports and that apply finds unchanged; without a user,
// every crontab of the spool directory is listed, this one among them.
func TestInstances(t *testing.T) {
	testUser(t, "pipcron11", 47520)
	install(t, "pipcron11", "MAILTO=root\n# c\n7 3 * * * /usr/bin/unmanaged  arg\n@reboot /bin/boot\n"+
		"# Puppet Name: j1\nFOO=bar\nBAR=baz\n8,9 * * 1-5 * /bin/named\n# Puppet Name: j2\n1 2 3 4 5 /bin/old\n# Puppet Name: j2\n@daily /bin/j2\n")
	list := typetest.List(t, cron.Type, cron.Crontab, map[string]any{"user": "pipcron11"})
	var titles []string
	for _, l := range list {
		titles = append(titles, l.Title)
	}
	require.Equal(t, []string{"unmanaged:/usr/bin/unmanaged_arg-1", "unmanaged:/bin/boot-2", "j1", "j2"}, titles)
	st := list[2].State
	assert.Equal(t, "present", st.Value("ensure"))
	assert.Equal(t, "/bin/named", st.Value("command"))
	assert.Equal(t, []any{"8", "9"}, st.Value("minute"))
	assert.Equal(t, "absent", st.Value("hour"))
	assert.Equal(t, []any{"1-5"}, st.Value("month"))
	assert.Equal(t, "absent", st.Value("monthday"))
	assert.Equal(t, "absent", st.Value("special"))
	assert.Equal(t, []any{"FOO=bar", "BAR=baz"}, st.Value("environment"))
	assert.Equal(t, "pipcron11", st.Value("user"))
	assert.Equal(t, "pipcron11", st.Value("target"))
	assert.Equal(t, "daily", list[3].State.Value("special"), "the last j2")
	assert.Equal(t, "/usr/bin/unmanaged  arg", list[0].State.Value("command"))

	before := listed(t, "pipcron11")
	e := typetest.New(t, []*applier.Type{cron.Type})
	for title, params := range map[string]string{
		"j1":                                 "{user: pipcron11, command: /bin/named, minute: [8, 9], month: 1-5, environment: [FOO=bar, BAR=baz]}",
		"j2":                                 "{user: pipcron11, command: /bin/j2, special: daily}",
		"unmanaged:/usr/bin/unmanaged_arg-1": "{user: pipcron11, command: '/usr/bin/unmanaged  arg', minute: 7, hour: 3, special: absent}",
	} {
		assert.Equal(t, "unchanged", typetest.Summary(e.Apply("cron", title, params)), title)
	}
	assert.Equal(t, before, listed(t, "pipcron11"))

	all := typetest.List(t, cron.Type, cron.Crontab, nil)
	st = typetest.FindListed(all, "j1")
	require.NotNil(t, st, "every crontab is listed")
	assert.Equal(t, "pipcron11", st.Value("user"))

	assert.Empty(t, typetest.List(t, cron.Type, cron.Crontab, map[string]any{"user": "pipnosuchuser"}))
}
