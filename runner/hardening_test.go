package runner_test

import (
	"context"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/internal/testutil"
	"github.com/pippet/pippet/mock"
	"github.com/pippet/pippet/protocol"
	"github.com/pippet/pippet/runner"
)

// Invalid UTF-8 anywhere in a request is refused before anything is
// written: JSON would carry it as U+FFFD, another name and other content.
func TestApplyRefusesInvalidUTF8(t *testing.T) {
	tests := []struct {
		name string
		res  runner.Resource
		want string
	}{
		{"type", runner.Resource{Type: "no\xfftify", Title: "x"}, "the type is not valid UTF-8 (byte 2)"},
		{"title", runner.Resource{Type: "file", Title: "/tmp/a\xffb"}, "the title is not valid UTF-8 (byte 6)"},
		{"params", runner.Resource{Type: "file", Title: "/tmp/a", Params: "{content: \"\xfe\"}"}, "params are not valid UTF-8 (byte 11)"},
		{"a value", runner.Resource{Type: "file", Title: "/tmp/a", Values: map[string]any{"content": "a\xffb"}}, "content: string"},
		{"a key", runner.Resource{Type: "file", Title: "/tmp/a", Values: map[string]any{"con\xfftent": "x"}}, "key"},
		{"in a list", runner.Resource{Type: "file", Title: "/tmp/a", Values: map[string]any{"ignore": []string{"ok", "\xff"}}}, "ignore: string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &mock.Runner{}
			defer m.Close()
			_, err := runner.Apply(context.Background(), m, &tt.res)
			require.ErrorIs(t, err, runner.ErrInvalidRequest)
			assert.Contains(t, err.Error(), tt.want)
			assert.Empty(t, m.RawLines(), "nothing was written")
		})
	}
}

// Params as Go values go as a JSON object with the YAML kinds of the
// table in Resource's doc.
func TestValuesEncoding(t *testing.T) {
	type mode string
	n := 3
	tests := []struct {
		name   string
		values map[string]any
		want   string
		err    string
	}{
		{name: "scalars", values: map[string]any{"s": "yes", "o": "0644", "b": true, "i": 42, "u": uint8(7), "f": 1.0, "g": 2.5e300, "z": nil},
			want: `{"b":true,"f":1.0,"g":2.5e+300,"i":42,"o":"0644","s":"yes","u":7,"z":null}`},
		{name: "collections", values: map[string]any{"l": []string{"a", "b"}, "m": map[string]int{"x": 1}, "a": [2]bool{true, false}, "p": &n, "t": mode("0600")},
			want: `{"a":[true,false],"l":["a","b"],"m":{"x":1},"p":3,"t":"0600"}`},
		{name: "an integral float stays a float", values: map[string]any{"f": float32(3)}, want: `{"f":3.0}`},
		{name: "NaN", values: map[string]any{"f": mathNaN()}, err: "has no JSON form"},
		{name: "huge uint", values: map[string]any{"u": uint64(1 << 63)}, err: "beyond the receiver's integers"},
		{name: "a struct", values: map[string]any{"s": struct{}{}}, err: "has no YAML kind"},
		{name: "int keys", values: map[string]any{"m": map[int]string{1: "a"}}, err: "keys must be strings"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &mock.Runner{}
			defer m.Close()
			_, err := runner.Apply(context.Background(), m, &runner.Resource{Type: "notify", Title: "v", Values: tt.values})
			if tt.err != "" {
				require.ErrorIs(t, err, runner.ErrInvalidRequest)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			require.Len(t, m.RawLines(), 1)
			assert.Equal(t, `{"type":"notify","title":"v","params":`+tt.want+`}`, m.RawLines()[0])
			// The receiver's decoder reads it back.
			var req protocol.Request
			require.NoError(t, protocol.DecodeLine([]byte(m.RawLines()[0]), &req))
		})
	}
	m := &mock.Runner{}
	defer m.Close()
	_, err := runner.Apply(context.Background(), m, &runner.Resource{Type: "notify", Title: "v", Params: "{a: 1}", Values: map[string]any{"b": 2}})
	require.ErrorIs(t, err, runner.ErrInvalidRequest)
	assert.Contains(t, err.Error(), "both Params and Values")
}

// One stderr line over a MiB does not end stderr logging: it is logged
// cut short, and the lines after it are logged too.
func TestStderrLongLineDoesNotEndLogging(t *testing.T) {
	var logs testutil.SyncBuffer
	body := `echo '{"ready":true}'
while IFS= read -r line; do
  head -c 2000000 /dev/zero | tr '\0' x >&2; echo >&2
  echo "Warning: after the long line" >&2
  answer "$line"
done
`
	r := runner.New(runner.Options{Command: script(t, body), Logger: testLogger(&logs)})
	require.NoError(t, r.Register())
	for range 2 {
		_, err := apply(t, r, "x")
		require.NoError(t, err)
	}
	require.NoError(t, r.Unregister())
	assert.Equal(t, 2, strings.Count(logs.String(), "Warning: after the long line"), "logging went on")
	assert.Contains(t, logs.String(), "...(line of 2000000 bytes cut short)")
	assert.Less(t, len(logs.String()), 1<<20, "the long line was not logged whole")
}

// A write into a pipe the child closed is a dead receiver.
func TestBrokenPipeIsReceiverDied(t *testing.T) {
	body := "exec 0<&-\necho '{\"ready\":true}'\nwhile :; do sleep 1; done\n"
	r := runner.New(runner.Options{Command: script(t, body), StopTimeout: 100 * time.Millisecond})
	require.NoError(t, r.Register())
	defer r.Unregister()
	_, err := apply(t, r, "x")
	require.ErrorIs(t, err, runner.ErrReceiverDied)
	assert.Contains(t, err.Error(), "broken pipe")
	assert.False(t, r.Running(), "the child is replaced before the next request")
}

// The child's starts and exits are logged at debug level only.
func TestLifecycleLoggedAtDebug(t *testing.T) {
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		var logs testutil.SyncBuffer
		log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: level}))
		r := runner.New(runner.Options{Command: script(t, "echo '{\"ready\":true}'\n"+echoLoop), Logger: log})
		require.NoError(t, r.Register())
		pid := r.Pid()
		require.NoError(t, r.Unregister())
		requireGone(t, pid)
		if level == slog.LevelInfo {
			assert.Empty(t, logs.String())
		} else {
			assert.Contains(t, logs.String(), "receiver started")
			require.Eventually(t, func() bool { return strings.Contains(logs.String(), "receiver exited") }, 5*time.Second, 5*time.Millisecond)
		}
	}
}

// A title of 12 MiB (the receiver reads up to 16) has an answer the runner
// reads; errors about it quote only the start of it.
func TestBinaryAnswerToTheLongestRequest(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 12 MiB requests")
	}
	r := realReceiver(t, runner.Options{})
	defer r.Unregister()
	title := strings.Repeat("t", 12<<20)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := runner.ApplyResult(ctx, r, &runner.Resource{Type: "notify", Title: title})
	require.NoError(t, err)
	assert.True(t, res.Changed)
	assert.Len(t, res.Resource, len("Notify[]")+len(title))

	_, err = runner.Apply(ctx, r, &runner.Resource{Type: "notify", Title: title, Params: "{bogus: 1}"})
	var re *runner.ResultError
	require.ErrorAs(t, err, &re)
	assert.Less(t, len(err.Error()), 8<<10, "the error quotes the title cut short")
	assert.Contains(t, err.Error(), "bytes)")

	_, err = runner.Apply(ctx, r, &runner.Resource{Type: "notify", Title: strings.Repeat("t", 17<<20)})
	require.ErrorIs(t, err, runner.ErrInvalidRequest)
	assert.Contains(t, err.Error(), "more than the 16777216 the receiver reads")
	assert.Less(t, len(err.Error()), 1<<10)
}

// Params as Go values and Check, through the real receiver.
func TestBinaryValuesAndCheck(t *testing.T) {
	r := realReceiver(t, runner.Options{})
	defer r.Unregister()
	path := filepath.Join(t.TempDir(), "motd")
	res := &runner.Resource{Type: "file", Title: path, Values: map[string]any{"ensure": "file", "content": "hi: there\n", "mode": "0600"}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	inSync, events, err := runner.Check(ctx, r, res)
	require.NoError(t, err)
	assert.False(t, inSync)
	require.NotEmpty(t, events)
	assert.Equal(t, "ensure", events[0].Property)
	assert.Equal(t, protocol.StatusNoop, events[0].Status)
	assert.NoFileExists(t, path, "Check changes nothing")

	changed, err := runner.Apply(ctx, r, res)
	require.NoError(t, err)
	assert.True(t, changed)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "hi: there\n", string(b))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	inSync, events, err = runner.Check(ctx, r, res)
	require.NoError(t, err)
	assert.True(t, inSync)
	assert.Empty(t, events)

	// Params in a string are checked the same way.
	inSync, events, err = runner.Check(ctx, r, &runner.Resource{Type: "file", Title: path, Params: "{ensure: file, mode: '0644'}"})
	require.NoError(t, err)
	assert.False(t, inSync)
	require.Len(t, events, 1)
	assert.Equal(t, "mode", events[0].Property)
	fi, err = os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "Check changes nothing")
}

func mathNaN() float64 { return math.NaN() }
