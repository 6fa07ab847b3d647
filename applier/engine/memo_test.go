package engine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
		Params: map[string]any{"ensure": "file", "mode": "0644"}}, *got.req)
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
	assert.Equal(t, []any{"a", "b"}, got.req.Params["groups"])
}

// sight is the session's use of the memo for one line: a line not
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
			assert.Equal(t, fmt.Sprintf("/srv/f%d", i), got.req.Title)
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

// A line's memo key is the line without a trailing numeric id member,
// and the id its digits.
func TestMemoKey(t *testing.T) {
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
}
