package cron_test

import (
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/types/cron"
	"github.com/pippet/pippet/applier/typetest"
)

// testUser creates the account name with a free uid from uid up to 47599
// (any free one when others hold them all) and a crontab-less start,
// removing both when the test ends.
func testUser(t testing.TB, name string, uid int) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: installs crontabs of a test account it creates")
	}
	if _, err := exec.LookPath("crontab"); err != nil {
		t.Fatalf("crontab(1) is not installed (Debian package cron): %v", err)
	}
	drop := func() {
		exec.Command("crontab", "-r", "-u", name).Run()
		exec.Command("userdel", name).Run()
	}
	drop()
	t.Cleanup(drop)
	var out []byte
	var err error
	for ; uid <= 47599; uid++ {
		if _, taken := user.LookupId(strconv.Itoa(uid)); taken == nil {
			continue
		}
		out, err = exec.Command("useradd", "-u", strconv.Itoa(uid), "-U", "-M", "-d", "/nonexistent", name).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "not unique") {
			break
		}
	}
	if uid > 47599 {
		out, err = exec.Command("useradd", "-U", "-M", "-d", "/nonexistent", name).CombinedOutput()
	}
	require.NoError(t, err, "%s", out)
}

// listed is `crontab -l -u name` without Puppet's time-stamped header
// lines, "" when the user has no crontab.
func listed(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("crontab", "-l", "-u", name).Output()
	if err != nil {
		return ""
	}
	var b strings.Builder
	for _, l := range strings.SplitAfter(string(out), "\n") {
		if !strings.HasPrefix(l, "# HEADER:") {
			b.WriteString(l)
		}
	}
	return b.String()
}

func install(t testing.TB, name, text string) {
	t.Helper()
	c := exec.Command("crontab", "-u", name, "-")
	c.Stdin = strings.NewReader(text)
	out, err := c.CombinedOutput()
	require.NoError(t, err, "%s", out)
}

type step struct {
	title, params string
	want          string // typetest.Summary
	events        string // typetest.Events, when not ""
	tab           string // crontab -l afterwards without the header ("-": unchecked)
}

// run applies steps for user u (U in params).
func run(t *testing.T, u string, steps []step) {
	t.Helper()
	e := typetest.New(t, []*applier.Type{cron.Type})
	for i, s := range steps {
		e.Step(i, "cron", s.title, strings.ReplaceAll(s.params, "U", u), s.want, s.events)
		if s.tab != "-" {
			assert.Equal(t, s.tab, listed(t, u), "step %d", i+1)
		}
	}
}

// Recorded with puppet apply (Puppet 7.23, cron_core): each time field
// in each form, special schedules, a change of command, removal.
func TestRecordedLifecycle(t *testing.T) {
	testUser(t, "pipcron1", 47510)
	const h = "# Puppet Name: j1\n"
	run(t, "pipcron1", []step{
		{"j1", "{user: U, command: '/bin/echo hi', minute: 5, hour: [1, 13], weekday: [1, 5]}", "changed",
			"ensure: created (success)\n", h + "5 1,13 * * 1,5 /bin/echo hi\n"},
		{"j1", "{user: U, command: '/bin/echo hi', minute: '5', hour: ['1', '13'], weekday: ['1', '5']}", "unchanged", "", h + "5 1,13 * * 1,5 /bin/echo hi\n"},
		{"j1", "{user: U, command: '/bin/echo hi', minute: 5, hour: [13, 1], weekday: [mon, Friday]}", "changed",
			"hour: hour changed ['1', '13'] to ['13', '1'] (success)\n", h + "5 13,1 * * 1,5 /bin/echo hi\n"},
		{"j1", "{user: U, command: '/bin/echo bye', minute: absent, hour: '*', weekday: absent}", "changed",
			"command: command changed '/bin/echo hi' to '/bin/echo bye' (success)\n" +
				"minute: undefined 'minute' from ['5'] (success)\n" +
				"hour: undefined 'hour' from ['13', '1'] (success)\n" +
				"weekday: undefined 'weekday' from ['1', '5'] (success)\n", h + "* * * * * /bin/echo bye\n"},
		{"j1", "{user: U, command: '/bin/echo bye', minute: '*/15', hour: '1-5', monthday: '1-10/2', month: [jan, Dec]}", "changed",
			"minute: defined 'minute' as ['*/15'] (success)\n" +
				"hour: defined 'hour' as ['1-5'] (success)\n" +
				"month: defined 'month' as ['1', '12'] (success)\n" +
				"monthday: defined 'monthday' as ['1-10/2'] (success)\n", h + "*/15 1-5 1-10/2 1,12 * /bin/echo bye\n"},
		{"j1", "{user: U, command: '/bin/echo bye', special: daily, minute: absent, hour: absent, monthday: absent, month: absent}", "changed",
			"special: defined 'special' as 'daily' (success)\n" +
				"minute: undefined 'minute' from ['*/15'] (success)\n" +
				"hour: undefined 'hour' from ['1-5'] (success)\n" +
				"month: undefined 'month' from ['1', '12'] (success)\n" +
				"monthday: undefined 'monthday' from ['1-10/2'] (success)\n", h + "@daily /bin/echo bye\n"},
		{"j1", "{user: U, command: '/bin/echo bye', special: absent, minute: 0}", "changed",
			"special: undefined 'special' from 'daily' (success)\n" +
				"minute: defined 'minute' as ['0'] (success)\n", h + "0 * * * * /bin/echo bye\n"},
		{"j1", "{user: U, ensure: absent}", "changed", "ensure: removed (success)\n", "\n"},
		{"j1", "{user: U, ensure: absent}", "unchanged", "", "\n"},
	})
}

// Recorded: weekday and month names become numbers; 0 and 7 both stay.
func TestRecordedNames(t *testing.T) {
	testUser(t, "pipcron2", 47511)
	want := "# Puppet Name: j2\n* * * 2,3 0,6,7,0 /bin/true\n"
	run(t, "pipcron2", []step{
		{"j2", "{user: U, command: /bin/true, weekday: [sun, sat, '7', '0'], month: [February, mar]}", "changed", "", want},
		{"j2", "{user: U, command: /bin/true, weekday: ['0', '6', '7', '0'], month: ['2', '3']}", "unchanged", "", want},
	})
}

// Recorded: what Puppet refuses, and what it accepts.
func TestRecordedRefusals(t *testing.T) {
	testUser(t, "pipcron3", 47512)
	run(t, "pipcron3", []step{
		{"j3", "{user: U, command: /bin/true, minute: 60}", "error: Parameter minute failed on Cron[j3]: 60 is not a valid minute", "", ""},
		{"j3", "{user: U, command: /bin/true, hour: abc}", "error: Parameter hour failed on Cron[j3]: abc is not a valid hour", "", ""},
		{"j3", "{user: U, command: /bin/true, weekday: 8}", "error: Parameter weekday failed on Cron[j3]: 8 is not a valid weekday", "", ""},
		{"j3", "{user: U, command: /bin/true, month: 0}", "error: Parameter month failed on Cron[j3]: 0 is not a valid month", "", ""},
		{"j3", "{user: U, command: /bin/true, monthday: 32}", "error: Parameter monthday failed on Cron[j3]: 32 is not a valid monthday", "", ""},
		{"j3", "{user: U, command: /bin/true, special: daily, minute: 1}", "error: Validation of Cron[j3] failed: Cron[j3] cannot specify both a special schedule and a value for minute", "", ""},
		{"j3", "{user: U, command: /bin/true, special: often}", "error: Parameter special failed on Cron[j3]: Invalid value \"often\". Valid values are reboot, yearly, annually, monthly, weekly, daily, midnight, hourly, absent.", "", ""},
		{"j3", "{user: U, command: /bin/true, environment: notanenv}", "error: Parameter environment failed on Cron[j3]: Invalid environment setting \"notanenv\"", "", ""},
		{"j3", "{user: U, command: /bin/true, minute: 1-2-3}", "error: Parameter minute failed on Cron[j3]: 1-2-3 is not a valid minute", "", ""},
		{"j3", "{user: U, command: /bin/true, minute: '-1'}", "error: Parameter minute failed on Cron[j3]: -1 is not a valid minute", "", ""},
		{"j3", "{user: U, command: /bin/true, weekday: mon-fri}", "error: Parameter weekday failed on Cron[j3]: mon-fri is not a valid weekday", "", ""},
		// Puppet answers "created", then fails to write.
		{"j3", "{user: nosuchuserx, command: /bin/true}", "failed: change from 'absent' to 'present' failed: Cannot write the nosuchuserx user's crontab: The user does not exist", "", ""},
		// Puppet logs an error and answers "created" (the oracle's cron-no-command).
		{"j3", "{user: U, minute: 3}", "failed: change from 'absent' to 'present' failed: no command specified, cannot create", "", ""},
		// Ranges are not checked for order, as in Puppet.
		{"j3", "{user: U, command: /bin/true, minute: 5-1}", "changed", "", "# Puppet Name: j3\n5-1 * * * * /bin/true\n"},
		{"j3", "{user: U, command: /bin/true, minute: 3}", "changed", "minute: minute changed ['5-1'] to ['3'] (success)\n", "# Puppet Name: j3\n3 * * * * /bin/true\n"},
		// Not in Puppet: a line break would write lines of the caller's choosing.
		{"j3", "{user: U, command: \"/bin/true\\n* * * * * /bin/evil\"}", "error: Parameter command failed on Cron[j3]: Command must not contain a line break", "", "-"},
		{"j3\n* * * * * /bin/evil", "{user: U, command: /bin/true}", "error: Parameter name failed on Cron[j3\n* * * * * /bin/evil]: Name must not contain a line break", "", "-"},
		{"j3", "{user: U, command: /bin/true, environment: \"A=1\\n* * * * * /bin/evil\"}", "error: Parameter environment failed on Cron[j3]: Invalid environment setting \"A=1\\n* * * * * /bin/evil\"", "", "-"},
		{"j3", "{user: '-r', command: /bin/true}", "error: Parameter user failed on Cron[j3]: Invalid user name \"-r\"", "", "-"},
		{"j3", "{user: U, target: root, command: /bin/true}", "error: Validation of Cron[j3] failed: user and target name different crontabs; give one of them", "", "-"},
	})
}

// Recorded: environment lines compared as a set, removed, replaced.
func TestRecordedEnvironment(t *testing.T) {
	testUser(t, "pipcron4", 47513)
	const h = "# Puppet Name: j4\n"
	run(t, "pipcron4", []step{
		{"j4", "{user: U, command: /bin/true, environment: ['PATH=/bin', 'MAILTO=\"\"'], minute: 1}", "changed", "", h + "PATH=/bin\nMAILTO=\"\"\n1 * * * * /bin/true\n"},
		{"j4", "{user: U, command: /bin/true, environment: ['MAILTO=\"\"', 'PATH=/bin'], minute: 1}", "unchanged", "", h + "PATH=/bin\nMAILTO=\"\"\n1 * * * * /bin/true\n"},
		{"j4", "{user: U, command: /bin/true, environment: absent, minute: 1}", "changed", "", h + "1 * * * * /bin/true\n"},
		{"j4", "{user: U, command: /bin/true, environment: 'A=1', minute: 1}", "changed", "", h + "A=1\n1 * * * * /bin/true\n"},
	})
}

// Recorded: a crontab with lines of its own. An unnamed job with the
// command and schedule asked for is taken as the resource's (and left
// unnamed); other lines stay where they are, re-rendered as Puppet
// renders jobs; a new job goes at the end.
func TestRecordedExistingCrontab(t *testing.T) {
	testUser(t, "pipcron5", 47514)
	install(t, "pipcron5", "# a comment\nMAILTO=root\n\n7 3 * * * /usr/bin/unmanaged\n@reboot /bin/boot   arg\n# Puppet Name: j7\nFOO=bar\n8 * * * * /bin/named\n# Puppet Name: j8\n1 2 3 4 5 /bin/j8\n0 0 * * * /bin/last\n")
	run(t, "pipcron5", []step{
		{"j5", "{user: U, command: /usr/bin/unmanaged, minute: 7, hour: 3}", "unchanged", "", "-"},
		{"j6", "{user: U, command: /bin/new, minute: 7}", "changed", "", "-"},
		{"j7", "{user: U, command: /bin/named, minute: 8}", "unchanged", "", "-"},
		{"j7", "{user: U, command: /bin/named, minute: 9}", "changed", "minute: minute changed ['8'] to ['9'] (success)\n", "-"},
		{"j8", "{user: U, ensure: absent}", "changed", "ensure: removed (success)\n",
			"# a comment\nMAILTO=root\n\n7 3 * * * /usr/bin/unmanaged\n@reboot /bin/boot   arg\n# Puppet Name: j7\nFOO=bar\n9 * * * * /bin/named\n0 0 * * * /bin/last\n# Puppet Name: j6\n7 * * * * /bin/new\n"},
		// A schedule the unnamed job does not have: a job of its own.
		{"j5", "{user: U, command: /usr/bin/unmanaged, minute: 7, hour: 4}", "changed", "ensure: created (success)\n", "-"},
	})
}

// Recorded: the command is stripped; a job with no schedule runs every
// minute; target is the user.
func TestRecordedCommandOnly(t *testing.T) {
	testUser(t, "pipcron6", 47515)
	want := "# Puppet Name: j9\n* * * * * /bin/spaced\n"
	run(t, "pipcron6", []step{
		{"j9", "{user: U, command: '  /bin/spaced  '}", "changed", "", want},
		{"j9", "{user: U, command: /bin/spaced, target: U}", "unchanged", "", want},
		{"j9", "{target: U, command: /bin/spaced}", "unchanged", "", want},
	})
}

// The spool file read directly says what `crontab -l` says, and an edit
// by crontab(1) is seen at once although the crontab is kept parsed.
func TestSpoolFileAndEditsElsewhere(t *testing.T) {
	testUser(t, "pipcron7", 47516)
	e := typetest.New(t, []*applier.Type{cron.Type})
	req := "{user: pipcron7, command: /bin/true, minute: 1}"
	assert.Equal(t, "changed", typetest.Summary(e.Apply("cron", "j", req)))
	assert.Equal(t, "unchanged", typetest.Summary(e.Apply("cron", "j", req)))
	spool, err := os.ReadFile(filepath.Join("/var/spool/cron/crontabs", "pipcron7"))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(spool), "# DO NOT EDIT THIS FILE"), "%s", spool)

	install(t, "pipcron7", "# Puppet Name: j\n2 * * * * /bin/true\n")
	res := e.Apply("cron", "j", req)
	assert.Equal(t, "minute: minute changed ['2'] to ['1'] (success)\n", typetest.Events(res))
	assert.Equal(t, "# Puppet Name: j\n1 * * * * /bin/true\n", listed(t, "pipcron7"))
	assert.Equal(t, "unchanged", typetest.Summary(e.Apply("cron", "j", req)))
}

// A line that is no comment, variable or job fails the crontab's jobs,
// as in Puppet, and the crontab is left alone.
func TestUnparsableLine(t *testing.T) {
	testUser(t, "pipcron8", 47517)
	install(t, "pipcron8", "* * * * * /bin/a\n")
	// crontab(1) refuses such a line, so it comes from an editor.
	path := filepath.Join("/var/spool/cron/crontabs", "pipcron8")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, append(b, "garbage\n"...), 0o600))
	e := typetest.New(t, []*applier.Type{cron.Type})
	res := e.Apply("cron", "j", "{user: pipcron8, command: /bin/true}")
	assert.Equal(t, "failed: Could not evaluate Cron[j]: could not parse line 2 of pipcron8's crontab", typetest.Summary(res))
	assert.Equal(t, "* * * * * /bin/a\ngarbage\n", listed(t, "pipcron8"))
}

// Each form a time field takes, as Puppet's CronParam munges it.
func TestFieldValues(t *testing.T) {
	for _, tc := range []struct {
		field string
		in    any
		want  any // the munged value, or an error's text
	}{
		{"minute", int64(0), []any{"0"}},
		{"minute", "07", []any{"07"}},
		{"minute", "59", []any{"59"}},
		{"minute", "60", "60 is not a valid minute"},
		{"minute", "*", "absent"},
		{"minute", []any{"*"}, "absent"},
		{"minute", "absent", "absent"},
		{"minute", "*/5", []any{"*/5"}},
		{"minute", "*/", "*/ is not a valid minute"},
		{"minute", "1-5", []any{"1-5"}},
		{"minute", "1-5/2", []any{"1-5/2"}},
		{"minute", "1-/2", "1-/2 is not a valid minute"},
		{"minute", "1-5/", "1-5/ is not a valid minute"},
		{"minute", "", " is not a valid minute"},
		{"hour", []any{int64(1), "13"}, []any{"1", "13"}},
		{"hour", "24", "24 is not a valid hour"},
		{"monthday", "0", "0 is not a valid monthday"},
		{"monthday", "31", []any{"31"}},
		{"month", "jan", []any{"1"}},
		{"month", "DECEMBER", []any{"12"}},
		{"month", "Sept", "Sept is not a valid month"},
		{"month", "13", "13 is not a valid month"},
		{"weekday", "Sun", []any{"0"}},
		{"weekday", "saturday", []any{"6"}},
		{"weekday", "7", []any{"7"}},
		{"weekday", "1-5", []any{"1-5"}},
	} {
		r, err := cron.Type.NewResource("j", map[string]any{"command": "/bin/true", "user": "root", tc.field: tc.in}, false)
		if want, isErr := tc.want.(string); isErr && want != "absent" {
			require.Error(t, err, "%s %v", tc.field, tc.in)
			assert.Contains(t, err.Error(), want)
			continue
		}
		require.NoError(t, err, "%s %v", tc.field, tc.in)
		assert.Equal(t, tc.want, r.Value(tc.field), "%s %v", tc.field, tc.in)
	}
}

// noop reports what would change and leaves the crontab alone; a noop
// creation installs nothing.
func TestNoop(t *testing.T) {
	testUser(t, "pipcron10", 47519)
	run(t, "pipcron10", []step{
		{"jn", "{user: U, command: /bin/true, minute: 1, noop: true}", "unchanged",
			"ensure: current_value 'absent', should be 'present' (noop) (noop)\n", ""},
		{"jn", "{user: U, command: /bin/true, minute: 1}", "changed", "", "# Puppet Name: jn\n1 * * * * /bin/true\n"},
		{"jn", "{user: U, command: /bin/true, minute: 2, noop: true}", "unchanged",
			"minute: current_value ['1'], should be ['2'] (noop) (noop)\n", "# Puppet Name: jn\n1 * * * * /bin/true\n"},
	})
}
