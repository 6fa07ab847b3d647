package runner_test

import (
	"context"
	"encoding/json" // what a Go program using the standard library sees
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/mock"
	"github.com/pippet/pippet/protocol"
	"github.com/pippet/pippet/runner"
)

var hello = &runner.Resource{Type: "notify", Title: "hello", Params: "{message: hi}"}

func TestApplyAgainstMock(t *testing.T) {
	const deadline = 300 * time.Millisecond
	tests := []struct {
		name    string
		banner  string
		reply   mock.Reply
		changed bool
		errIs   error  // a sentinel the error must wrap
		errHas  string // text the error must contain
		result  bool   // the error is a *runner.ResultError
		broken  bool   // the child must be replaced afterwards
	}{
		{name: "changed", reply: mock.Changed(), changed: true},
		{name: "unchanged", reply: mock.Unchanged()},
		{name: "ready banner skipped", banner: `{"ready":true,"protocol":1,"version":"0.1.0"}`, reply: mock.Changed(), changed: true},
		{name: "puppet notice banner skipped", banner: "\x1b[mNotice: ready\x1b[0m", reply: mock.Changed(), changed: true},
		{name: "noise before the answer", reply: mock.Reply{
			Noise:  []string{"Notice: /Stage[main]/Notify[hello]/message: defined 'message' as 'hi'", "\x1b[1;31mError: (Applying Notify[x]) boom\x1b[0m", "", "   "},
			Answer: &runner.Result{Changed: true},
		}, changed: true},
		{name: "error with exception", reply: mock.Errored("no parameter named 'bogus'"),
			result: true, errHas: "Notify[hello]: receiver could not apply it: no parameter named 'bogus'"},
		{name: "failed", reply: mock.Failed("exit code 1"),
			result: true, errHas: "Notify[hello] failed: exit code 1"},
		{name: "failed without exception", reply: mock.Reply{Answer: &runner.Result{Failed: true}},
			result: true, errHas: "Notify[hello] failed: no reason given"},
		{name: "partial JSON line", reply: mock.Reply{Raw: `{"resource":"Notify[hello]","failed":fal` + "\n"},
			errIs: runner.ErrBadAnswer, errHas: "Notify[hello]", broken: true},
		{name: "partial JSON, no newline", reply: mock.Reply{Raw: `{"resource":"Notify[hello]","fai`},
			errIs: runner.ErrNoAnswer, broken: true},
		{name: "garbage JSON", reply: mock.Reply{Raw: "{\x00\xff garbage}}}\n"},
			errIs: runner.ErrBadAnswer, broken: true},
		{name: "JSON without result fields", reply: mock.Reply{Raw: `{"resource":"Notify[hello]"}` + "\n"},
			errIs: runner.ErrBadAnswer, errHas: "lacks failed, changed or error", broken: true},
		{name: "JSON that is not an object", reply: mock.Reply{Raw: "[1,2]\n"},
			errIs: runner.ErrNoAnswer, broken: true},
		{name: "binary garbage, then nothing", reply: mock.Reply{Raw: "\x00\x01\x02\xfe\n"},
			errIs: runner.ErrNoAnswer, broken: true},
		{name: "empty output", reply: mock.Reply{},
			errIs: runner.ErrNoAnswer, broken: true},
		{name: "empty lines only", reply: mock.Reply{Raw: "\n\n\r\n"},
			errIs: runner.ErrNoAnswer, broken: true},
		{name: "EOF", reply: mock.Reply{EOF: true},
			errIs: runner.ErrReceiverDied, errHas: "receiver died before answering", broken: true},
		{name: "EOF after noise", reply: mock.Reply{Noise: []string{"Error: out of memory"}, EOF: true},
			errIs: runner.ErrReceiverDied, broken: true},
		{name: "EOF mid-answer", reply: mock.Reply{Raw: `{"resource":"Notify[hello]","changed":tr`, EOF: true},
			errIs: runner.ErrBadAnswer, broken: true},
		{name: "slow answer within the deadline", reply: mock.Reply{Delay: 50 * time.Millisecond, Answer: &runner.Result{Changed: true}}, changed: true},
		{name: "answer held past the deadline", reply: mock.Reply{Wait: make(chan struct{}), Answer: &runner.Result{Changed: true}},
			errIs: runner.ErrNoAnswer, errHas: "context deadline exceeded", broken: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &mock.Runner{Banner: tt.banner, Script: []mock.Reply{tt.reply, mock.Unchanged()}}
			t.Cleanup(func() { m.Close() })
			ctx, cancel := context.WithTimeout(context.Background(), deadline)
			defer cancel()

			start := time.Now()
			changed, err := runner.Apply(ctx, m, hello)
			elapsed := time.Since(start)
			assert.Less(t, elapsed, deadline+time.Second, "Apply must return within the deadline")
			assert.Equal(t, tt.changed, changed)

			wantErr := tt.errIs != nil || tt.errHas != "" || tt.result
			if !wantErr {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
				if tt.errIs != nil {
					assert.ErrorIs(t, err, tt.errIs)
				}
				assert.Contains(t, err.Error(), "Notify[hello]")
				if tt.errHas != "" {
					assert.Contains(t, err.Error(), tt.errHas)
				}
				var re *runner.ResultError
				assert.Equal(t, tt.result, errors.As(err, &re), "ResultError")
			}

			// The next request gets its own answer, from a fresh child
			// when this one was broken: a late or leftover answer is never
			// taken for the next one's.
			ctx2, cancel2 := context.WithTimeout(context.Background(), time.Second)
			defer cancel2()
			changed, err = runner.Apply(ctx2, m, &runner.Resource{Type: "notify", Title: "second"})
			require.NoError(t, err)
			assert.False(t, changed)
			wantStarts := 1
			if tt.broken {
				wantStarts = 2
			}
			assert.Equal(t, wantStarts, m.Starts(), "children started")
			assert.Len(t, m.Requests(), 2)
		})
	}
}

func TestApplyResultCarriesEvents(t *testing.T) {
	events := []protocol.Event{{Property: "mode", Previous: "0644", Desired: "0600", Message: "mode changed '0644' to '0600'", Status: protocol.StatusSuccess}}
	m := &mock.Runner{Respond: func(req runner.Resource) mock.Reply {
		return mock.Reply{Answer: &runner.Result{Changed: true, ID: []byte(`7`), Events: events}}
	}}
	defer m.Close()
	res := &runner.Resource{Type: "file", Title: "/tmp/x", Params: "{mode: '0600'}"}
	got, err := runner.ApplyResult(context.Background(), m, res)
	require.NoError(t, err)
	assert.Equal(t, runner.Result{Resource: "File[/tmp/x]", Changed: true, ID: []byte(`7`), Events: events}, got)
}

func TestResultErrorKeepsTheAnswer(t *testing.T) {
	m := &mock.Runner{Script: []mock.Reply{{Answer: &runner.Result{Resource: "Exec[/bin/false]", Failed: true, Exception: "returned 1 instead of one of [0]",
		Events: []protocol.Event{{Property: "returns", Previous: "notrun", Desired: []any{"0"}, Status: protocol.StatusFailure}}}}}}
	defer m.Close()
	_, err := runner.Apply(context.Background(), m, &runner.Resource{Type: "exec", Title: "/bin/false"})
	var re *runner.ResultError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, "Exec[/bin/false]", re.Ref)
	assert.True(t, re.Result.Failed)
	assert.Equal(t, protocol.StatusFailure, re.Result.Events[0].Status)
	assert.EqualError(t, err, "Exec[/bin/false] failed: returned 1 instead of one of [0]")
}

func TestApplySendsOneJSONLine(t *testing.T) {
	m := &mock.Runner{}
	defer m.Close()
	reqs := []*runner.Resource{
		{Type: "notify", Title: "hello", Params: "{message: hi}"},
		{Type: "file", Title: "/tmp/with space & <tag>", Params: ""},
		{Type: "exec", Title: "echo \"x\"\ny", Params: `{"path": "/bin"}`},
	}
	for _, r := range reqs {
		_, err := runner.Apply(context.Background(), m, r)
		require.NoError(t, err)
	}
	raw := m.RawLines()
	require.Len(t, raw, 3)
	assert.Equal(t, `{"type":"notify","title":"hello","params":"{message: hi}"}`, raw[0])
	got := m.Requests()
	assert.Equal(t, runner.Resource{Type: "file", Title: "/tmp/with space & <tag>", Params: "{}"}, got[1], "empty params are sent as {}")
	assert.Equal(t, *reqs[2], got[2])
}

func TestApplyWithDoneContextSendsNothing(t *testing.T) {
	m := &mock.Runner{}
	defer m.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := runner.Apply(ctx, m, hello)
	require.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, m.Requests())
	_, err = runner.Apply(context.Background(), m, hello)
	require.NoError(t, err)
	assert.Equal(t, 1, m.Starts(), "an unsent request does not break the child")
}

func TestApplyCancelWhileWaiting(t *testing.T) {
	m := &mock.Runner{Script: []mock.Reply{{}}}
	defer m.Close()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := runner.Apply(ctx, m, hello)
	require.ErrorIs(t, err, runner.ErrNoAnswer)
	require.ErrorIs(t, err, context.Canceled)
}

// Answers that arrive in one burst are each read by their own request:
// nothing read ahead is lost between calls.
func TestNoBytesLostBetweenApplies(t *testing.T) {
	// The first reply carries its own answer and, in the same write, the
	// answer to the second request; the second reply writes nothing.
	second := `{"resource":"Notify[b]","failed":false,"changed":true,"noop":false,"error":false,"exception":null}` + "\n"
	m := &mock.Runner{Script: []mock.Reply{
		{Answer: &runner.Result{}, Raw: second},
		{},
	}}
	defer m.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	changed, err := runner.Apply(ctx, m, &runner.Resource{Type: "notify", Title: "a"})
	require.NoError(t, err)
	assert.False(t, changed)
	res, err := runner.ApplyResult(ctx, m, &runner.Resource{Type: "notify", Title: "b"})
	require.NoError(t, err)
	assert.True(t, res.Changed)
	assert.Equal(t, "Notify[b]", res.Resource)
}

func TestConcurrentAppliesAreSerialized(t *testing.T) {
	m := &mock.Runner{Respond: func(req runner.Resource) mock.Reply {
		// changed iff the title ends in an odd digit
		if (req.Title[len(req.Title)-1]-'0')%2 == 1 {
			return mock.Changed()
		}
		return mock.Unchanged()
	}}
	defer m.Close()
	const workers, each = 8, 250
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				res, err := runner.ApplyResult(context.Background(), m, &runner.Resource{Type: "notify", Title: fmt.Sprintf("w%d-%d", w, i)})
				if err != nil {
					errs <- err
					return
				}
				if want := fmt.Sprintf("Notify[w%d-%d]", w, i); res.Resource != want || res.Changed != (i%2 == 1) {
					errs <- fmt.Errorf("answer %+v for %s", res, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	assert.Len(t, m.Requests(), workers*each)
	assert.Equal(t, 1, m.Starts())
}

func TestResourceRef(t *testing.T) {
	tests := []struct{ typ, title, want string }{
		{"file", "/etc/motd", "File[/etc/motd]"},
		{"File", "/x", "File[/x]"},
		{"EXEC", "ls", "Exec[ls]"},
		{"apt::source", "main", "Apt::Source[main]"},
		{"notify", "with ] bracket", "Notify[with ] bracket]"},
	}
	for _, tt := range tests {
		r := runner.Resource{Type: tt.typ, Title: tt.title}
		assert.Equal(t, tt.want, r.Ref())
	}
}

func TestErrorMessagesAreSpecific(t *testing.T) {
	m := &mock.Runner{Script: []mock.Reply{{Raw: strings.Repeat("{", 500) + "\n"}}}
	defer m.Close()
	_, err := runner.Apply(context.Background(), m, hello)
	require.ErrorIs(t, err, runner.ErrBadAnswer)
	assert.Less(t, len(err.Error()), 600, "a bad line is quoted only in part")
}

func TestResultEncodesAsTheReceiverDoes(t *testing.T) {
	tests := []struct {
		res  runner.Result
		want string
	}{
		{runner.Result{Resource: "File[/x]", Changed: true},
			`{"resource":"File[/x]","failed":false,"changed":true,"noop":false,"error":false,"exception":null}`},
		{runner.Result{Failed: true, Error: true, Exception: "bad line"},
			`{"failed":true,"changed":false,"error":true,"exception":"bad line"}`},
		{runner.Result{Resource: "Notify[a]", Noop: true, ID: []byte(`"r1"`), Events: []protocol.Event{{Property: "message", Previous: "absent", Desired: "a", Message: "defined", Status: protocol.StatusNoop}}},
			`{"resource":"Notify[a]","failed":false,"changed":false,"noop":true,"error":false,"exception":null,"id":"r1","events":[{"property":"message","previous":"absent","desired":"a","message":"defined","status":"noop"}]}`},
	}
	for _, tt := range tests {
		b, err := json.Marshal(tt.res)
		require.NoError(t, err)
		assert.Equal(t, tt.want, string(b))
		var back runner.Result
		require.NoError(t, json.Unmarshal(b, &back))
		assert.Equal(t, tt.res, back)
	}
}
