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

	"github.com/pippet/pippet/internal/testutil"
	"github.com/pippet/pippet/mock"
	"github.com/pippet/pippet/protocol"
)

// A line is kept on its second sighting, as a copy that the decoder's
// next lines (which reuse its map and buffers) do not change.
func TestReqMemoKeepsOnSecondSighting(t *testing.T) {
	m := newReqMemo()
	var dec protocol.Decoder
	var req protocol.Request
	line := []byte(`{"type":"file","title":"/x","id":7,"params":"{ensure: file, mode: '0644'}"}`)
	for i := range 2 {
		got, h := m.find(line)
		require.Nil(t, got, "sighting %d", i+1)
		require.NoError(t, dec.DecodeLine(line, &req))
		m.offer(line, h, &req)
	}
	other := []byte(`{"type":"notify","title":"n","id":8,"params":"{message: other}"}`)
	require.NoError(t, dec.DecodeLine(other, &req))
	got, _ := m.find(line)
	require.NotNil(t, got)
	assert.Equal(t, protocol.Request{Type: "file", Title: "/x", ID: []byte("7"), Stable: true,
		Params: map[string]any{"ensure": "file", "mode": "0644"}}, *got)
	notKept, _ := m.find(other)
	assert.Nil(t, notKept, "seen once")
}

// Requests with a mapping among their params (or in a list), and long
// lines, are never kept.
func TestReqMemoKeepsOnlyScalars(t *testing.T) {
	m := newReqMemo()
	var dec protocol.Decoder
	var req protocol.Request
	for _, line := range [][]byte{
		[]byte(`{"type":"file","title":"/x","params":"{ensure: file, tag: {a: b}}"}`),
		[]byte(`{"type":"file","title":"/x","params":"{ensure: file, tag: [a, {b: c}]}"}`),
		[]byte(`{"type":"notify","title":"` + strings.Repeat("n", memoMaxLine) + `","params":"{}"}`),
	} {
		for range 3 {
			got, h := m.find(line)
			require.Nil(t, got)
			require.NoError(t, dec.DecodeLine(line, &req))
			m.offer(line, h, &req)
		}
	}
}

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

// A list of scalars is kept, as a copy of its own.
func TestReqMemoKeepsAListOfScalars(t *testing.T) {
	m := newReqMemo()
	var dec protocol.Decoder
	var req protocol.Request
	line := []byte(`{"type":"user","title":"u","params":"{groups: [a, b]}"}`)
	for range 2 {
		sight(t, m, &dec, &req, line)
	}
	req.Params["groups"].([]any)[0] = "changed"
	got, _ := m.find(line)
	require.NotNil(t, got)
	assert.Equal(t, []any{"a", "b"}, got.Params["groups"])
}

// sight is the receiver loop's use of the memo for one line: a line not
// found is decoded and offered.
func sight(t *testing.T, m *reqMemo, dec *protocol.Decoder, req *protocol.Request, line []byte) {
	t.Helper()
	if got, h := m.find(line); got == nil {
		require.NoError(t, dec.DecodeLine(line, req))
		m.offer(line, h, req)
	}
}

// A converging engine's set of resources, each re-sent, stays kept: the
// table's ways absorb the hash collisions a direct-mapped table loses.
func TestReqMemoKeepsARepeatedSet(t *testing.T) {
	m := newReqMemo()
	var dec protocol.Decoder
	var req protocol.Request
	const n = 1000
	line := func(i int) []byte {
		return []byte(fmt.Sprintf(`{"type":"file","title":"/srv/f%d","params":"{ensure: file, content: x}"}`, i))
	}
	for range 2 {
		for i := range n {
			sight(t, m, &dec, &req, line(i))
		}
	}
	kept := 0
	for i := range n {
		if got, _ := m.find(line(i)); got != nil {
			kept++
			assert.Equal(t, fmt.Sprintf("/srv/f%d", i), got.Title)
		}
	}
	assert.GreaterOrEqual(t, kept, 990)
	// One-off lines after it do not push the set out.
	for i := range 4 * n {
		sight(t, m, &dec, &req, []byte(fmt.Sprintf(`{"type":"notify","title":"once%d","params":"{}"}`, i)))
	}
	still := 0
	for i := range n {
		if got, _ := m.find(line(i)); got != nil {
			still++
		}
	}
	assert.GreaterOrEqual(t, still, 990, "seen-once lines are not kept, so they evict nothing")
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
	for _, tc := range []struct{ line, key, id string }{
		{`{"type":"a","title":"b","params":"{}","id":12}`, `{"type":"a","title":"b","params":"{}"`, "12"},
		{`{"type":"a","title":"b","params":"{}"}`, `{"type":"a","title":"b","params":"{}"}`, ""},
		{`{"type":"a","title":"b","id":"12"}`, `{"type":"a","title":"b","id":"12"}`, ""},
		{`{"type":"a","title":"b","id":}`, `{"type":"a","title":"b","id":}`, ""},
		{`{"id":7}`, `{"id":7}`, ""},
		{`"id":7}`, `"id":7}`, ""},
	} {
		key, id := memoKey([]byte(tc.line))
		assert.Equal(t, tc.key, string(key), tc.line)
		assert.Equal(t, tc.id, string(id), tc.line)
	}

	var stable []bool
	var seen []*protocol.Request
	app := &mock.Applier{Func: func(_ context.Context, req *protocol.Request) protocol.Result {
		stable = append(stable, req.Stable)
		seen = append(seen, req)
		return protocol.Result{Resource: protocol.Ref(req.Type, req.Title)}
	}}
	var in strings.Builder
	for i := 1; i <= 4; i++ {
		fmt.Fprintf(&in, `{"type":"notify","title":"n","params":"{message: hi}","id":%d}`+"\n", i)
	}
	out, code := runString(t, loopConfig{}, app, in.String())
	require.Equal(t, exitOK, code)
	assert.Equal(t, []bool{false, false, true, true}, stable, "kept on the second sighting, found on the third")
	assert.Same(t, seen[2], seen[3])
	_, as := testutil.DecodeAnswers(t, out)
	require.Len(t, as, 4)
	for i, a := range as {
		assert.Equal(t, fmt.Sprint(i+1), string(a.ID), "answer %d carries its own line's id", i)
	}
}
