package stream

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/engine"
	"github.com/pippet/pippet/delegate"
	"github.com/pippet/pippet/internal/puppetlog"
	"github.com/pippet/pippet/internal/testutil"
	"github.com/pippet/pippet/mock"
	"github.com/pippet/pippet/protocol"
)

func runString(t *testing.T, cfg Config, app protocol.Applier, in string) (string, int) {
	t.Helper()
	var out bytes.Buffer
	code := Run(context.Background(), cfg, app, strings.NewReader(in), &out, nil)
	return out.String(), code
}

func TestLoopAnswersInOrder(t *testing.T) {
	app := &mock.Applier{}
	in := strings.Join([]string{
		"# a comment gets no answer",
		"",
		`{"type":"notify","title":"one","params":"{message: hi}","id":1}`,
		"   ",
		"file /tmp/two {ensure: file}",
		`{"type":"File","title":"/tmp/three","params":{"ensure":"absent"},"id":"x"}`,
		"{garbage",
		`{"type":"notify","title":"five","params":"[not, a, mapping]"}`,
		"notify six {}", // no newline at the end
	}, "\n")
	out, code := runString(t, Config{Banner: true}, app, in)
	assert.Equal(t, ExitOK, code)
	lines := strings.SplitAfter(out, "\n")
	require.Equal(t, protocol.Banner, lines[0])
	_, as := testutil.DecodeAnswers(t, strings.Join(lines[1:], ""))
	require.Len(t, as, 6)
	assert.Equal(t, "Notify[one]", *as[0].Resource)
	assert.Equal(t, "1", string(as[0].ID))
	assert.True(t, as[0].Changed)
	assert.Equal(t, "File[/tmp/two]", *as[1].Resource)
	assert.Equal(t, "File[/tmp/three]", *as[2].Resource)
	assert.Equal(t, `"x"`, string(as[2].ID))
	assert.Nil(t, as[3].Resource)
	assert.True(t, as[3].Error && as[3].Failed && !as[3].Changed)
	assert.Contains(t, *as[3].Exception, "request line 7")
	assert.Equal(t, "Notify[five]", *as[4].Resource)
	assert.True(t, as[4].Error)
	assert.Contains(t, *as[4].Exception, "expected a mapping")
	assert.Equal(t, "Notify[six]", *as[5].Resource)

	reqs := app.Requests()
	require.Len(t, reqs, 4, "undecodable lines never reach the applier")
	// The loop reuses its Params map from line to line; the mock keeps
	// copies, so each request still has its own.
	assert.Equal(t, map[string]any{"message": "hi"}, reqs[0].Params)
	assert.Equal(t, map[string]any{"ensure": "file"}, reqs[1].Params)
	assert.Equal(t, map[string]any{"ensure": "absent"}, reqs[2].Params)
	assert.Equal(t, map[string]any{}, reqs[3].Params)
}

func TestLoopNoBannerAndCompat(t *testing.T) {
	app := &mock.Applier{Func: func(_ context.Context, req *protocol.Request) protocol.Result {
		return protocol.Result{Resource: protocol.Ref(req.Type, req.Title), Changed: true,
			Events: []protocol.Event{{Property: "ensure", Previous: "absent", Desired: "file", Message: "created", Status: "success"}}}
	}}
	in := `{"type":"file","title":"/a","params":"{}","id":9}` + "\n"
	out, _ := runString(t, Config{Compat: true}, app, in)
	assert.Equal(t, `{"resource":"File[/a]","failed":false,"changed":true,"noop":false,"error":false,"exception":null}`+"\n", out)
	out, _ = runString(t, Config{}, app, in)
	assert.Equal(t, `{"resource":"File[/a]","failed":false,"changed":true,"noop":false,"error":false,"exception":null,"id":9,`+
		`"events":[{"property":"ensure","previous":"absent","desired":"file","message":"created","status":"success"}]}`+"\n", out)
}

// Each answer is written before the next line is read: a controller that
// waits for the answer before writing more must not deadlock.
func TestLoopAnswerReadableBeforeEOF(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int)
	go func() {
		done <- Run(context.Background(), Config{Banner: true}, &mock.Applier{}, inR, outW, nil)
		outW.Close()
	}()
	r := bufio.NewReader(outR)
	banner, err := r.ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, protocol.Banner, banner)
	for _, title := range []string{"a", "b", "c"} {
		_, err := io.WriteString(inW, `{"type":"notify","title":"`+title+`","params":"{}"}`+"\n")
		require.NoError(t, err)
		line, err := readLineTimeout(r, 5*time.Second)
		require.NoError(t, err)
		assert.Contains(t, line, `"resource":"Notify[`+title+`]"`)
	}
	inW.Close()
	assert.Equal(t, ExitOK, <-done)
}

func readLineTimeout(r *bufio.Reader, d time.Duration) (string, error) {
	type res struct {
		s   string
		err error
	}
	ch := make(chan res, 1)
	go func() { s, err := r.ReadString('\n'); ch <- res{s, err} }()
	select {
	case x := <-ch:
		return x.s, x.err
	case <-time.After(d):
		return "", errors.New("no answer in time")
	}
}

func TestLoopLongLines(t *testing.T) {
	const max = 1000
	app := &mock.Applier{}
	long := `{"type":"notify","title":"big","params":"{message: ` + strings.Repeat("x", 5000) + `}"}`
	exact := "notify exact {m: " + strings.Repeat("y", max-len("notify exact {m: ")-1) + "}"
	require.Len(t, exact, max)
	over := exact + "z"
	in := long + "\n" + "notify after {}\n" + exact + "\n" + over + "\n" + strings.Repeat("q", 3*max) // last: long, no newline
	out, code := runString(t, Config{MaxLine: max}, app, in)
	assert.Equal(t, ExitOK, code)
	_, as := testutil.DecodeAnswers(t, out)
	require.Len(t, as, 5)
	assert.True(t, as[0].Error)
	assert.Contains(t, *as[0].Exception, "line of 5054 bytes is longer than the limit of 1000 bytes")
	assert.Equal(t, "Notify[after]", *as[1].Resource)
	assert.False(t, as[1].Error)
	assert.Equal(t, "Notify[exact]", *as[2].Resource)
	assert.False(t, as[2].Error)
	assert.True(t, as[3].Error)
	assert.Contains(t, *as[3].Exception, "line of 1001 bytes")
	assert.True(t, as[4].Error)
	assert.Contains(t, *as[4].Exception, "line of 3000 bytes")
	assert.Len(t, app.Requests(), 2)
}

// A line far longer than the limit is consumed without being held: the
// loop's memory stays near the limit.
func TestLoopHugeLineIsNotHeld(t *testing.T) {
	const size = 64 << 20
	r := io.MultiReader(strings.NewReader("notify before {}\n"), &repeatReader{b: 'a', n: size},
		strings.NewReader("\nnotify after {}\n"))
	var out bytes.Buffer
	code := Run(context.Background(), Config{MaxLine: 1 << 20}, &mock.Applier{}, r, &out, nil)
	assert.Equal(t, ExitOK, code)
	_, as := testutil.DecodeAnswers(t, out.String())
	require.Len(t, as, 3)
	assert.False(t, as[0].Error)
	assert.True(t, as[1].Error)
	assert.Contains(t, *as[1].Exception, "line of 67108864 bytes")
	assert.Equal(t, "Notify[after]", *as[2].Resource)
	assert.False(t, as[2].Error)
}

type repeatReader struct {
	b     byte
	n     int
	chunk []byte
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	n := min(len(p), r.n)
	if len(r.chunk) == 0 {
		r.chunk = bytes.Repeat([]byte{r.b}, 64<<10)
	}
	n = copy(p[:n], r.chunk)
	r.n -= n
	return n, nil
}

// A panic in a provider is answered once, by the engine, with the
// request's id echoed once, by the loop; the next line is read.
func TestLoopPanicBecomesErrorAnswer(t *testing.T) {
	p := mock.NewProvider(nil)
	p.Panic = "assignment to entry in nil map"
	typ := &applier.Type{
		Name: "gadget::widget",
		Doc:  "A test type.",
		Attrs: []*applier.Attr{
			{Name: "name", Behaviour: applier.Namevar, Kind: applier.KindString, Doc: "The name."},
			{Name: "ensure", Behaviour: applier.Property, Kind: applier.KindEnum, Values: []string{"present", "absent"}, Doc: "Presence."},
		},
		Providers: []*applier.ProviderSpec{p.Spec("mem")},
	}
	reg := applier.NewRegistry()
	reg.Add(typ)
	var logs bytes.Buffer
	log := slog.New(puppetlog.New(&logs, slog.LevelError))
	eng := engine.New(reg, &applier.Env{Log: log})
	in := `{"type":"gadget::widget","title":"boom","params":"{ensure: present}","id":"r1"}` + "\n" +
		`{"type":"notify","title":"fine","params":"{}","id":"r2"}` + "\n"
	out, code := runString(t, Config{Log: log}, eng, in)
	assert.Equal(t, ExitOK, code)
	_, as := testutil.DecodeAnswers(t, out)
	require.Len(t, as, 2)
	assert.Equal(t, "Gadget::Widget[boom]", *as[0].Resource)
	assert.True(t, as[0].Error && as[0].Failed)
	assert.Equal(t, "Gadget::Widget[boom]: internal error: assignment to entry in nil map", *as[0].Exception)
	assert.JSONEq(t, `"r1"`, string(as[0].ID))
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		assert.Equal(t, 1, strings.Count(line, `"id":`), "one id in %s", line)
	}
	assert.Equal(t, "Notify[fine]", *as[1].Resource)
	assert.JSONEq(t, `"r2"`, string(as[1].ID))
	assert.Contains(t, logs.String(), "panic while applying Gadget::Widget[boom]")
}

// SIGTERM while a resource is being applied: it finishes, is answered,
// and the loop ends with 0 without reading the next line.
func TestLoopSignalFinishesResourceInProgress(t *testing.T) {
	started := make(chan struct{})
	release := make(chan struct{})
	app := &mock.Applier{Func: func(ctx context.Context, req *protocol.Request) protocol.Result {
		if req.Title == "slow" {
			close(started)
			<-release
			return protocol.Result{Resource: "Notify[slow]", Changed: true}
		}
		return protocol.Result{Resource: protocol.Ref(req.Type, req.Title), Changed: true}
	}}
	inR, inW := io.Pipe()
	defer inW.Close()
	var out testutil.SyncBuffer
	sigs := make(chan os.Signal, 2)
	done := make(chan int)
	go func() { done <- Run(context.Background(), Config{}, app, inR, &out, sigs) }()
	go io.WriteString(inW, "notify slow {}\nnotify next {}\n")
	<-started
	sigs <- syscall.SIGTERM
	time.Sleep(50 * time.Millisecond) // the signal must not cut the resource short
	select {
	case <-done:
		t.Fatal("loop ended before the resource in progress finished")
	default:
	}
	close(release)
	select {
	case code := <-done:
		assert.Equal(t, ExitOK, code)
	case <-time.After(5 * time.Second):
		t.Fatal("loop did not end after the signal")
	}
	_, as := testutil.DecodeAnswers(t, out.String())
	require.Len(t, as, 1)
	assert.Equal(t, "Notify[slow]", *as[0].Resource)
	assert.Len(t, app.Requests(), 1)
}

// A second signal cancels the resource in progress through its context.
func TestLoopSecondSignalCancels(t *testing.T) {
	started := make(chan struct{})
	app := &mock.Applier{Func: func(ctx context.Context, req *protocol.Request) protocol.Result {
		close(started)
		<-ctx.Done()
		return protocol.ErrorResult("Exec[x]", "cancelled: "+ctx.Err().Error())
	}}
	sigs := make(chan os.Signal, 2)
	var out testutil.SyncBuffer
	done := make(chan int)
	go func() {
		done <- Run(context.Background(), Config{}, app, strings.NewReader("exec x {}\n"), &out, sigs)
	}()
	<-started
	sigs <- syscall.SIGINT
	sigs <- syscall.SIGINT
	select {
	case code := <-done:
		assert.Equal(t, ExitOK, code)
	case <-time.After(5 * time.Second):
		t.Fatal("second signal did not cancel")
	}
	assert.Contains(t, out.String(), "cancelled: context canceled")
}

// A signal while idle (waiting for input) ends the loop at once.
func TestLoopSignalWhileIdle(t *testing.T) {
	inR, inW := io.Pipe()
	defer inW.Close()
	sigs := make(chan os.Signal, 1)
	done := make(chan int)
	go func() { done <- Run(context.Background(), Config{}, &mock.Applier{}, inR, io.Discard, sigs) }()
	sigs <- syscall.SIGTERM
	select {
	case code := <-done:
		assert.Equal(t, ExitOK, code)
	case <-time.After(5 * time.Second):
		t.Fatal("idle loop did not end on a signal")
	}
}

func TestLoopClosedStdout(t *testing.T) {
	outR, outW := io.Pipe()
	outR.Close()
	code := Run(context.Background(), Config{}, &mock.Applier{}, strings.NewReader("notify a {}\nnotify b {}\n"), outW, nil)
	assert.Equal(t, ExitOutput, code)
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

func TestLoopReadError(t *testing.T) {
	var logs bytes.Buffer
	code := Run(context.Background(), Config{Log: slog.New(puppetlog.New(&logs, slog.LevelWarn))},
		&mock.Applier{}, failingReader{}, io.Discard, nil)
	assert.Equal(t, ExitInput, code)
	assert.Contains(t, logs.String(), "Error: reading stdin: line of 0 bytes: disk on fire")
}

// A line split across writes is one line, a last line without a newline
// is answered, and a line that arrives alone is answered before the next
// one is written.
func TestLoopSplitAndLastLines(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int)
	go func() {
		done <- Run(context.Background(), Config{}, &mock.Applier{}, inR, outW, nil)
		outW.Close()
	}()
	r := bufio.NewReader(outR)
	_, err := io.WriteString(inW, "notify sp")
	require.NoError(t, err)
	time.Sleep(20 * time.Millisecond)
	_, err = io.WriteString(inW, "lit {}\n")
	require.NoError(t, err)
	line, err := readLineTimeout(r, 5*time.Second)
	require.NoError(t, err)
	assert.Contains(t, line, `"resource":"Notify[split]"`)
	_, err = io.WriteString(inW, "notify last {}")
	require.NoError(t, err)
	inW.Close()
	line, err = readLineTimeout(r, 5*time.Second)
	require.NoError(t, err)
	assert.Contains(t, line, `"resource":"Notify[last]"`)
	assert.Equal(t, ExitOK, <-done)
}

// A signal while the loop waits for input ends it at once; a line that
// arrives afterwards is neither applied nor answered.
func TestLoopSignalWhileIdleThenInput(t *testing.T) {
	app := &mock.Applier{}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	sigs := make(chan os.Signal, 1)
	done := make(chan int)
	go func() { done <- Run(context.Background(), Config{}, app, inR, outW, sigs) }()
	r := bufio.NewReader(outR)
	go io.WriteString(inW, "notify first {}\n")
	line, err := readLineTimeout(r, 5*time.Second)
	require.NoError(t, err)
	assert.Contains(t, line, "Notify[first]")
	time.Sleep(20 * time.Millisecond) // waiting for the next line
	sigs <- syscall.SIGTERM
	select {
	case code := <-done:
		assert.Equal(t, ExitOK, code)
	case <-time.After(5 * time.Second):
		t.Fatal("idle loop did not end on a signal")
	}
	// The abandoned read takes this line and must drop it.
	_, err = io.WriteString(inW, "notify late {}\n")
	require.NoError(t, err)
	inW.Close()
	outW.Close()
	rest, _ := io.ReadAll(r)
	assert.Empty(t, string(rest))
	time.Sleep(20 * time.Millisecond)
	assert.Len(t, app.Requests(), 1)
}

// A signal, then the parent context ending: the loop ends once, cleanly.
func TestLoopSignalThenContextCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	release := make(chan struct{})
	app := &mock.Applier{Func: func(_ context.Context, req *protocol.Request) protocol.Result {
		close(started)
		<-release
		return protocol.Result{Resource: "Notify[x]"}
	}}
	sigs := make(chan os.Signal, 1)
	done := make(chan int)
	go func() { done <- Run(ctx, Config{}, app, strings.NewReader("notify x {}\n"), io.Discard, sigs) }()
	<-started
	sigs <- syscall.SIGTERM
	time.Sleep(20 * time.Millisecond)
	cancel()
	time.Sleep(20 * time.Millisecond)
	close(release)
	assert.Equal(t, ExitOK, <-done)
}

// Errors are logged once by the loop; failures are left to the engine,
// which logs them where they happen.
func TestLoopLogsErrorsNotFailures(t *testing.T) {
	app := &mock.Applier{Func: func(_ context.Context, req *protocol.Request) protocol.Result {
		r := protocol.Result{Resource: protocol.Ref(req.Type, req.Title), Failed: true, Exception: "it broke"}
		r.Error = req.Title == "err"
		return r
	}}
	var logs bytes.Buffer
	Run(context.Background(), Config{Log: slog.New(puppetlog.New(&logs, slog.LevelDebug))}, app,
		strings.NewReader("notify err {}\nnotify fail {}\n{bad\n"), io.Discard, nil)
	assert.Equal(t, "Error: (Applying Notify[err]) it broke\n"+
		"Error: request line 3: invalid request: invalid JSON at byte 2: expected a member name in double quotes, found 'b'\n", logs.String())
}

// A panic in the decoder is answered too, and the next line is read.
func TestLoopDecoderPanic(t *testing.T) {
	var req protocol.Request
	decode := func(line []byte) (*protocol.Request, []byte, error) {
		if strings.Contains(string(line), "boom") {
			panic("decoder bug")
		}
		err := protocol.DecodeLine(line, &req)
		return &req, req.ID, err
	}
	out, code := runString(t, Config{Decode: decode}, &mock.Applier{}, "notify boom {}\nnotify fine {}\n")
	assert.Equal(t, ExitOK, code)
	_, as := testutil.DecodeAnswers(t, out)
	require.Len(t, as, 2)
	assert.True(t, as[0].Error)
	assert.Contains(t, *as[0].Exception, "request line 1: internal error (panic) while decoding: decoder bug")
	assert.Equal(t, "Notify[fine]", *as[1].Resource)
	assert.False(t, as[1].Error)
}

// panicky is an event value whose String method panics.
type panicky struct{}

func (panicky) String() string { panic("cannot print") }

func TestLoopEncoderPanic(t *testing.T) {
	app := &mock.Applier{Func: func(_ context.Context, req *protocol.Request) protocol.Result {
		r := protocol.Result{Resource: protocol.Ref(req.Type, req.Title), Changed: true}
		if req.Title == "odd" {
			r.Events = []protocol.Event{{Property: "p", Desired: panicky{}}}
		}
		return r
	}}
	out, code := runString(t, Config{}, app, `{"type":"notify","title":"odd","params":"{}","id":5}`+"\nnotify fine {}\n")
	assert.Equal(t, ExitOK, code)
	_, as := testutil.DecodeAnswers(t, out)
	require.Len(t, as, 2)
	assert.Equal(t, "Notify[odd]", *as[0].Resource)
	assert.True(t, as[0].Error)
	assert.Equal(t, "5", string(as[0].ID))
	assert.Contains(t, *as[0].Exception, "while encoding the answer: cannot print")
	assert.False(t, as[1].Error)
}

func TestReadLine(t *testing.T) {
	const max = 8
	tests := []struct {
		name    string
		in      string
		lines   []string
		tooLong []int64
	}{
		{"exact", "12345678\n", []string{"12345678"}, []int64{0}},
		{"exact with CRLF", "12345678\r\n", []string{"12345678\r"}, []int64{0}},
		{"one over", "123456789\n", []string{""}, []int64{9}},
		{"one over with CRLF", "123456789\r\nok\n", []string{"", "ok"}, []int64{10, 0}},
		{"no final newline", "abc", []string{"abc"}, []int64{0}},
		{"empty lines", "\n\nx\n", []string{"", "", "x"}, []int64{0, 0, 0}},
		{"long without newline", "0123456789abcdef", []string{""}, []int64{16}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := bufio.NewReaderSize(strings.NewReader(tt.in), 16)
			var lines []string
			var long []int64
			// Lines go after each other in one buffer.
			buf := []byte("before")
			var joined string
			for {
				var it lineItem
				it, buf = readLine(r, buf, max)
				if it.err != nil {
					require.ErrorIs(t, it.err, io.EOF)
					break
				}
				assert.Equal(t, string(it.line), string(buf[it.off:it.off+len(it.line)]))
				lines = append(lines, string(it.line))
				long = append(long, it.tooLong)
				joined += string(it.line)
			}
			assert.Equal(t, tt.lines, lines)
			assert.Equal(t, tt.tooLong, long)
			assert.Equal(t, "before"+joined, string(buf), "only the lines, back to back")
		})
	}
}

// aheadApp applies type "far" as the fallback does, sending ahead (at
// most 3 owed), and every other type at once; log records the order.
type aheadApp struct {
	log  []string
	owed []string
}

func (a *aheadApp) Apply(_ context.Context, req *protocol.Request) protocol.Result {
	a.log = append(a.log, "apply "+req.Title)
	return protocol.Result{Resource: protocol.Ref(req.Type, req.Title), Changed: true}
}

func (a *aheadApp) Delegates(req *protocol.Request) bool { return req.Type == "far" }

func (a *aheadApp) ApplyNative(ctx context.Context, req *protocol.Request) protocol.Result {
	return a.Apply(ctx, req)
}

func (a *aheadApp) Send(_ context.Context, req *protocol.Request) (delegate.SendStatus, protocol.Result) {
	if req.Title == "refused" {
		return delegate.Answered, protocol.ErrorResult("Far[refused]", "cannot delegate")
	}
	if len(a.owed) == 3 {
		return delegate.Full, protocol.Result{}
	}
	a.log = append(a.log, "send "+req.Title)
	a.owed = append(a.owed, req.Title)
	return delegate.Sent, protocol.Result{}
}

func (a *aheadApp) Receive(context.Context) protocol.Result {
	t := a.owed[0]
	a.owed = a.owed[1:]
	a.log = append(a.log, "recv "+t)
	return protocol.Result{Resource: "Far[" + t + "]", Changed: true}
}

// TestLoopSendsAhead: delegated requests with more lines waiting are sent
// without waiting for their answers, up to what the applier takes; a
// request that is not delegated (and a refused one) is applied and
// answered only after every answer owed; answers keep the order and ids
// of the lines.
func TestLoopSendsAhead(t *testing.T) {
	app := &aheadApp{}
	var in strings.Builder
	titles := []string{"f1", "f2", "f3", "f4", "f5", "n1", "f6", "refused", "f7", "f8"}
	for i, title := range titles {
		typ := "far"
		if title[0] == 'n' {
			typ = "notify"
		}
		in.WriteString(`{"type":"` + typ + `","title":"` + title + `","params":{},"id":` + string(rune('0'+i)) + "}\n")
	}
	out, code := runString(t, Config{}, app, in.String())
	assert.Equal(t, ExitOK, code)
	assert.Equal(t, []string{
		"send f1", "send f2", "send f3",
		"recv f1", "send f4", "recv f2", "send f5",
		"recv f3", "recv f4", "recv f5", "apply n1",
		"send f6", "recv f6", // before the refused one's answer
		"send f7", "send f8", "recv f7", "recv f8", // at the end of input
	}, app.log)
	_, as := testutil.DecodeAnswers(t, out)
	require.Len(t, as, len(titles))
	for i, a := range as {
		assert.Equal(t, string(rune('0'+i)), string(a.ID), "answer %d", i)
		assert.Contains(t, *a.Resource, "["+titles[i]+"]", "answer %d", i)
		assert.Equal(t, i == 7, a.Error, "answer %d", i)
	}
	assert.True(t, as[7].Error)
}

// blockingAheadApp sends every "far" request ahead (at most one owed) and
// answers it only when release is closed or its context ends; applied
// records every request evaluated afterwards.
type blockingAheadApp struct {
	receiving chan struct{} // closed when Receive starts waiting
	release   chan struct{}
	owed      []string
	applied   []string
	once      bool
}

func (a *blockingAheadApp) Apply(ctx context.Context, req *protocol.Request) protocol.Result {
	return a.ApplyNative(ctx, req)
}

func (a *blockingAheadApp) Delegates(req *protocol.Request) bool { return req.Type == "far" }

func (a *blockingAheadApp) ApplyNative(ctx context.Context, req *protocol.Request) protocol.Result {
	a.applied = append(a.applied, req.Title)
	if ctx.Err() != nil {
		return protocol.ErrorResult(protocol.Ref(req.Type, req.Title), "cancelled")
	}
	return protocol.Result{Resource: protocol.Ref(req.Type, req.Title), Changed: true}
}

func (a *blockingAheadApp) Send(ctx context.Context, req *protocol.Request) (delegate.SendStatus, protocol.Result) {
	if len(a.owed) == 1 {
		return delegate.Full, protocol.Result{}
	}
	a.applied = append(a.applied, req.Title)
	if ctx.Err() != nil {
		return delegate.Answered, protocol.ErrorResult(protocol.Ref(req.Type, req.Title), "cancelled")
	}
	a.owed = append(a.owed, req.Title)
	return delegate.Sent, protocol.Result{}
}

func (a *blockingAheadApp) Receive(ctx context.Context) protocol.Result {
	t := a.owed[0]
	a.owed = a.owed[1:]
	if !a.once {
		a.once = true
		close(a.receiving)
	}
	select {
	case <-a.release:
		return protocol.Result{Resource: "Far[" + t + "]", Changed: true}
	case <-ctx.Done():
		return protocol.ErrorResult("Far["+t+"]", "cancelled while delegated")
	}
}

// TestLoopSignalDuringDelegationStopsReading: a signal while the loop
// waits for a delegated answer (owed from a request sent ahead) ends the
// loop as it does without delegation: the answer owed is written, and the
// line read after it (native, or delegated and waiting for room) is
// neither evaluated nor answered, whether the first signal let the
// delegated resource finish or a second one cancelled it.
func TestLoopSignalDuringDelegationStopsReading(t *testing.T) {
	for _, tc := range []struct {
		name   string
		next   string
		cancel bool
	}{
		{"native next, finish", "notify n1 {}", false},
		{"native next, cancel", "notify n1 {}", true},
		{"delegated next, finish", "far f2 {}", false},
		{"delegated next, cancel", "far f2 {}", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			app := &blockingAheadApp{receiving: make(chan struct{}), release: make(chan struct{})}
			sigs := make(chan os.Signal, 2)
			var out testutil.SyncBuffer
			done := make(chan int)
			in := "far f1 {}\n" + tc.next + "\nnotify n2 {}\n"
			go func() {
				done <- Run(context.Background(), Config{}, app, strings.NewReader(in), &out, sigs)
			}()
			select {
			case <-app.receiving:
			case <-time.After(5 * time.Second):
				t.Fatal("the loop never waited for the delegated answer")
			}
			sigs <- syscall.SIGTERM
			if tc.cancel {
				sigs <- syscall.SIGTERM
			} else {
				time.Sleep(20 * time.Millisecond)
				close(app.release)
			}
			select {
			case code := <-done:
				assert.Equal(t, ExitOK, code)
			case <-time.After(5 * time.Second):
				t.Fatal("the loop did not end after the signal")
			}
			assert.Equal(t, []string{"f1"}, app.applied, "nothing evaluated after the signal")
			_, as := testutil.DecodeAnswers(t, out.String())
			require.Len(t, as, 1, out.String())
			assert.Equal(t, "Far[f1]", *as[0].Resource)
			assert.Equal(t, tc.cancel, as[0].Error)
		})
	}
}
