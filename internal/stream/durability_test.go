package stream

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier/dirsync"
	"github.com/pippet/pippet/internal/puppetlog"
	"github.com/pippet/pippet/internal/testutil"
	"github.com/pippet/pippet/mock"
	"github.com/pippet/pippet/protocol"
)

// flushLog records the deferred dirsync.Syncer's reports, with how many answers
// had been written when each came.
type flushLog struct {
	mu      sync.Mutex
	out     *countingWriter
	changes []int
	answers []int
}

func (f *flushLog) report(_, changes int, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.changes = append(f.changes, changes)
	f.answers = append(f.answers, f.out.lines())
}

func (f *flushLog) get() (changes, answers []int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]int(nil), f.changes...), append([]int(nil), f.answers...)
}

// countingWriter counts the answer lines written through it.
type countingWriter struct {
	mu sync.Mutex
	w  io.Writer
	n  int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, err := c.w.Write(p)
	c.n += bytes.Count(p[:n], []byte("\n"))
	return n, err
}

func (c *countingWriter) lines() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// The loop flushes a deferred dirsync.Syncer after answers, never with more
// than flushMarks changes waiting, and before it returns, however it
// ends. The applier marks a real directory for each request (titled
// "slow": after the test's signal).
func TestLoopFlushesDirectories(t *testing.T) {
	burst := strings.Repeat("notify x {}\n", 3*flushMarks+5)
	cases := []struct {
		name string
		in   string
		// signal: SIGTERM while "slow" runs.
		signal bool
		closed bool // stdout is closed
		code   int
		marks  int
	}{
		{name: "burst to EOF", in: burst, code: ExitOK, marks: 3*flushMarks + 5},
		{name: "SIGTERM with a line waiting", in: "notify slow {}\nnotify never {}\n", signal: true, code: ExitOK, marks: 1},
		{name: "stdout closed", in: "notify a {}\nnotify b {}\n", closed: true, code: ExitOutput, marks: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			var out io.Writer = &testutil.SyncBuffer{}
			if c.closed {
				r, w := io.Pipe()
				r.Close()
				out = w
			}
			cw := &countingWriter{w: out}
			fl := &flushLog{out: cw}
			dirs := dirsync.New(dirsync.Options{Deferred: true, Report: fl.report})
			started, release := make(chan struct{}), make(chan struct{})
			app := &mock.Applier{Func: func(ctx context.Context, req *protocol.Request) protocol.Result {
				if req.Title == "slow" {
					close(started)
					<-release
				}
				require.NoError(t, dirs.Mark(dir))
				return protocol.Result{Resource: protocol.Ref(req.Type, req.Title), Changed: true}
			}}
			sigs := make(chan os.Signal, 1)
			inR, inW := io.Pipe()
			go func() {
				io.WriteString(inW, c.in)
				if !c.signal {
					inW.Close()
				}
			}()
			defer inW.Close()
			done := make(chan int)
			go func() { done <- Run(context.Background(), Config{Dirs: dirs}, app, inR, cw, sigs) }()
			if c.signal {
				<-started
				sigs <- syscall.SIGTERM
				time.Sleep(20 * time.Millisecond) // the reader has long had the next line
				close(release)
			}
			select {
			case code := <-done:
				assert.Equal(t, c.code, code)
			case <-time.After(10 * time.Second):
				t.Fatal("loop did not end")
			}
			changes, answers := fl.get()
			total := 0
			for i, n := range changes {
				total += n
				assert.LessOrEqual(t, n, flushMarks, "flush %d", i)
				if !c.closed {
					assert.GreaterOrEqual(t, answers[i], total, "flush %d comes after the answers it covers", i)
				}
			}
			assert.Equal(t, c.marks, total, "every change is flushed before the loop returns")
			assert.Equal(t, 0, dirs.Pending())
		})
	}
}

// The receiver's dirsync.Syncer logs each round at debug level, and a failed
// flush at err level saying what it means.
func TestDirSyncLogging(t *testing.T) {
	for _, deferred := range []bool{true, false} {
		t.Run(fmt.Sprint("deferred=", deferred), func(t *testing.T) {
			var logs bytes.Buffer
			ds := NewDirSync(slog.New(puppetlog.New(&logs, slog.LevelDebug)), deferred)
			dir := t.TempDir()
			gone := dir + "/gone"
			require.NoError(t, ds.Mark(dir))
			require.NoError(t, ds.Mark(dir))
			markErr := ds.Mark(gone)
			_, flushErr := ds.Flush(context.Background())
			if deferred {
				assert.NoError(t, markErr)
				assert.Error(t, flushErr)
				assert.Equal(t, "Debug: fsynced 1 directory for 3 changes\n"+
					"Error: could not make changes durable: fsync directory "+gone+": no such file or directory; "+
					"changes answered earlier may not survive a power loss\n", logs.String())
			} else {
				assert.Error(t, markErr)
				assert.NoError(t, flushErr)
				assert.Equal(t, strings.Repeat("Debug: fsynced 1 directory for 1 change\n", 2), logs.String(),
					"the failure is the resource's to report")
			}
		})
	}
}
