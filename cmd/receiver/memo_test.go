package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/engine"
	"github.com/pippet/pippet/internal/stream"
	"github.com/pippet/pippet/internal/testutil"
	"github.com/pippet/pippet/mock"
	"github.com/pippet/pippet/protocol"
)

// The receiver's use of the engine session's memo of lines sent again
// (applier/engine/memo.go), end to end.

// A request answered from the memo is applied afresh: the current state
// is read again for each one, and applying it changes nothing kept.
func TestMemoStateReadAfresh(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	line := func(content string) string {
		return `{"type":"file","title":"` + path + `","params":"{ensure: file, content: ` + content + `}"}` + "\n"
	}
	a, b := line("a"), line("b")
	in := a + a + a + b + a + a // the third and the fifth a come from the memo
	var out, errb bytes.Buffer
	code := realMain(context.Background(), []string{"--no-banner", "--state-dir", filepath.Join(dir, "state")}, strings.NewReader(in), &out, &errb)
	require.Equal(t, exitOK, code, errb.String())
	_, as := testutil.DecodeAnswers(t, out.String())
	require.Len(t, as, 6)
	var changed []bool
	for _, an := range as {
		require.False(t, an.Failed, "%v", an)
		changed = append(changed, an.Changed)
	}
	assert.Equal(t, []bool{true, false, false, true, true, false}, changed)
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "a", string(got))
}

// A kept request keeps its verb: a find sent again and again reads, and
// never applies its params (before the fix, the third copy of a find of
// {ensure: absent} deleted the file).
func TestMemoKeepsTheVerb(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(path, []byte("keep me"), 0o644))
	line := `{"type":"file","title":"` + path + `","op":"find","params":"{ensure: absent}"}` + "\n"
	var out, errb bytes.Buffer
	code := realMain(context.Background(), []string{"--no-banner", "--state-dir", filepath.Join(dir, "state")},
		strings.NewReader(strings.Repeat(line, 5)), &out, &errb)
	require.Equal(t, exitOK, code, errb.String())
	_, as := testutil.DecodeAnswers(t, out.String())
	require.Len(t, as, 5)
	for i, an := range as {
		assert.False(t, an.Changed, "answer %d", i+1)
		assert.False(t, an.Failed, "answer %d", i+1)
	}
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "keep me", string(got))
}

// A local source's existence is checked for every request, kept or not:
// a source removed between two copies of a line is an error in the third.
func TestMemoVolatileSource(t *testing.T) {
	dir := t.TempDir()
	src, path := filepath.Join(dir, "src"), filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(src, []byte("s"), 0o644))
	line := `{"type":"file","title":"` + path + `","params":"{ensure: file, source: ` + src + `}"}` + "\n"
	pr, pw := io.Pipe()
	var out testutil.SyncBuffer
	done := make(chan int, 1)
	go func() {
		done <- realMain(context.Background(), []string{"--no-banner", "--state-dir", filepath.Join(dir, "state")}, pr, &out, io.Discard)
	}()
	for range 3 {
		_, err := io.WriteString(pw, line)
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { return strings.Count(out.String(), "\n") == 3 }, 10*time.Second, time.Millisecond)
	require.NoError(t, os.Remove(src))
	_, err := io.WriteString(pw, line)
	require.NoError(t, err)
	require.NoError(t, pw.Close())
	require.Equal(t, exitOK, <-done)
	_, as := testutil.DecodeAnswers(t, out.String())
	require.Len(t, as, 4)
	assert.True(t, as[0].Changed)
	assert.False(t, as[2].Failed)
	assert.True(t, as[3].Error, "%v", as[3])
	assert.Contains(t, *as[3].Exception, "Could not retrieve information from source(s)")
}

// TestMemoKeysWithoutTheRunnersID: lines that differ only in a trailing
// numeric id (runner numbers every request so) share one kept request,
// and each answer carries its own line's id.
func TestMemoKeysWithoutTheRunnersID(t *testing.T) {
	sess := engine.New(applier.Default, nil).NewSession()
	var seen []*protocol.Request
	app := &mock.Applier{Func: func(ctx context.Context, req *protocol.Request) protocol.Result {
		seen = append(seen, req)
		return sess.Apply(ctx, req)
	}}
	var in strings.Builder
	for i := 1; i <= 4; i++ {
		fmt.Fprintf(&in, `{"type":"notify","title":"n","params":"{message: hi}","id":%d}`+"\n", i)
	}
	var buf bytes.Buffer
	code := stream.Run(context.Background(), stream.Config{Decode: sess.Decode}, app, strings.NewReader(in.String()), &buf, nil)
	out := buf.String()
	require.Equal(t, exitOK, code)
	require.Len(t, seen, 4)
	assert.NotSame(t, seen[1], seen[2], "kept on the second sighting")
	assert.Same(t, seen[2], seen[3], "found on the third and after")
	_, as := testutil.DecodeAnswers(t, out)
	require.Len(t, as, 4)
	for i, a := range as {
		assert.Equal(t, fmt.Sprint(i+1), string(a.ID), "answer %d carries its own line's id", i)
	}
}
