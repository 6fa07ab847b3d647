package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/internal/testutil"
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
	assert.Equal(t, protocol.Request{Type: "file", Title: "/x", ID: []byte("7"),
		Params: map[string]any{"ensure": "file", "mode": "0644"}}, *got)
	notKept, _ := m.find(other)
	assert.Nil(t, notKept, "seen once")
}

// Requests with a list or a mapping among their params, and long lines,
// are never kept.
func TestReqMemoKeepsOnlyScalars(t *testing.T) {
	m := newReqMemo()
	var dec protocol.Decoder
	var req protocol.Request
	for _, line := range [][]byte{
		[]byte(`{"type":"file","title":"/x","params":"{ensure: file, tag: [a, b]}"}`),
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
