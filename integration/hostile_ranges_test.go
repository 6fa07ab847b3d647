package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/internal/testutil"
)

// Numbers outside an attribute's range, in every type that takes one, are
// error answers naming the resource and the attribute, given before any
// tool runs (issue 15 item 2): before the fix a uid or gid out of range
// reached useradd or groupadd (a "failed" answer naming the command), an
// exec timeout or try_sleep beyond a time.Duration overflowed (no timeout,
// no sleep), and a cron step or range bound out of range made crontab
// refuse the user's whole crontab. The receiver is the built binary; no
// account, group or crontab is touched (the names are private and the
// answers come before any provider runs), so it runs as any user.
func TestHostileNumbersOutOfRange(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	touch := "{command: '/usr/bin/touch " + marker + "', "
	reqs := []struct{ typ, title, params, want string }{
		{"user", "pipu397", "{uid: 4294967296}", "Parameter uid failed on User[pipu397]: id 4294967296 is out of range (0 to 4294967294)"},
		{"user", "pipu397", "{uid: -5}", "Parameter uid failed on User[pipu397]: id -5 is out of range"},
		{"user", "pipu397", "{uid: '99999999999999999999999'}", "Parameter uid failed on User[pipu397]: id 99999999999999999999999 is out of range"},
		{"user", "pipu397", "{gid: 4294967295}", "Parameter gid failed on User[pipu397]: id 4294967295 is out of range"},
		{"user", "pipu397", "{password_min_age: -2}", "Parameter password_min_age failed on User[pipu397]: days -2 is out of range (-1 or more)"},
		{"user", "pipu397", "{expiry: '2020-13-45'}", "Parameter expiry failed on User[pipu397]: Expiry date 2020-13-45 is not a date"},
		{"user", "pipu397", "{uid: 99999999999999999999}", "params: line 1 column 7: uid: integer 99999999999999999999 is out of range (64 bits)"},
		{"group", "pipg397", "{gid: 4294967296}", "Parameter gid failed on Group[pipg397]: id 4294967296 is out of range"},
		{"group", "pipg397", "{gid: -1}", "Parameter gid failed on Group[pipg397]: id -1 is out of range"},
		{"exec", "timeout", touch + "timeout: 1e300}", "Parameter timeout failed on Exec[timeout]: timeout 1e+300 is out of range (0 to 9223372036)"},
		{"exec", "nan", touch + "timeout: .nan}", "Parameter timeout failed on Exec[nan]: The timeout must be a number."},
		{"exec", "sleep", touch + "try_sleep: 99999999999, tries: 2}", "Parameter try_sleep failed on Exec[sleep]: try_sleep 99999999999 is out of range"},
		{"exec", "user", touch + "user: '4294967296'}", "Parameter user failed on Exec[user]: invalid user: id 4294967296 is out of range"},
		{"service", "pipsvc397", "{provider: base, status: /bin/false, start: '/usr/bin/touch " + marker + "', ensure: running, timeout: 9223372037}",
			"Parameter timeout failed on Service[pipsvc397]: timeout 9223372037 is out of range (1 to 9223372036)"},
		{"cron", "pipc397", "{command: /bin/true, user: nobody, minute: '*/4294967296'}", "Parameter minute failed on Cron[pipc397]: */4294967296 is not a valid minute: the step 4294967296 is out of range"},
		{"cron", "pipc397", "{command: /bin/true, user: nobody, hour: '1-24'}", "Parameter hour failed on Cron[pipc397]: 1-24 is not a valid hour: 24 is out of range (0 to 23)"},
		{"tidy", dir, "{recurse: true, max_files: -1}", "Parameter max_files failed on Tidy[" + dir + "]"},
		{"tidy", dir, "{age: '99999999999999w'}", "Parameter age failed on Tidy[" + dir + "]: Invalid tidy age 99999999999999w: too large"},
		{"file", filepath.Join(dir, "f"), "{ensure: file, owner: '4294967296'}", "Parameter owner failed on File[" + filepath.Join(dir, "f") + "]"},
	}
	var in strings.Builder
	for _, r := range reqs {
		b, err := json.Marshal(map[string]string{"type": r.typ, "title": r.title, "params": r.params})
		require.NoError(t, err)
		in.Write(append(b, '\n'))
	}
	start := time.Now()
	out, _, _ := run(t, dir, strings.NewReader(in.String()))
	_, as := testutil.DecodeAnswers(t, out)
	require.Len(t, as, len(reqs))
	for i, a := range as {
		assert.True(t, a.Error, "%s %s: an error answer, not %s", reqs[i].typ, reqs[i].params, str(a.Exception))
		assert.Contains(t, str(a.Exception), reqs[i].want, "%s %s", reqs[i].typ, reqs[i].params)
	}
	assert.Less(t, time.Since(start), time.Minute, "no sleep, no timeout waited for")
	_, err := os.Stat(marker)
	assert.True(t, os.IsNotExist(err), "no command ran")
	_, err = os.Stat(filepath.Join(dir, "f"))
	assert.True(t, os.IsNotExist(err), "no file created")
	for _, c := range [][]string{{"getent", "passwd", "pipu397"}, {"getent", "group", "pipg397"}} {
		assert.Error(t, exec.Command(c[0], c[1:]...).Run(), "%v: nothing created", c)
	}
}
