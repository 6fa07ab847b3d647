package catalog_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/catalog"
	"github.com/pippet/pippet/report"
)

// A change is corrective when it sets back what drifted from what the run
// before left, intentional when the catalog asks for something new, as
// Puppet's agent tells them apart with its transaction store.
func TestCorrectiveChange(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	store := filepath.Join(dir, "state", "transactionstore.json")
	o := catalog.Options{TransactionStore: store}
	file := func(content, mode string) []byte {
		return build(t,
			res{typ: "File", title: f, params: map[string]any{"ensure": "file", "content": content, "mode": mode}},
			res{typ: "Notify", title: "n", params: map[string]any{"message": "hi"}})
	}
	logLine := func(rep *report.Report, source string) string {
		for _, l := range rep.Logs {
			if l.Source == source {
				return l.Message
			}
		}
		return ""
	}
	path := "/Stage[main]/Main/File[" + f + "]"

	// Created: new, not corrective.
	rep, _ := applied(t, file("a\n", "0644"), o)
	s := status(t, rep, "File["+f+"]")
	require.True(t, s.Changed)
	assert.False(t, s.CorrectiveChange)
	assert.False(t, s.Events[0].CorrectiveChange)
	assert.FileExists(t, store)

	// Drifted, set back: corrective, and the event and its line say so.
	require.NoError(t, os.WriteFile(f, []byte("tampered\n"), 0o644))
	rep, out := applied(t, file("a\n", "0644"), o)
	s = status(t, rep, "File["+f+"]")
	require.Len(t, s.Events, 1)
	assert.True(t, s.Events[0].CorrectiveChange)
	// The console's line says it too, as puppet agent's does.
	assert.Regexp(t, `msg="`+regexp.QuoteMeta(path)+`/content: content changed '\{sha256\}[0-9a-f]+' to '\{sha256\}[0-9a-f]+' \(corrective\)"`, out)
	assert.True(t, s.CorrectiveChange)
	assert.Contains(t, s.Events[0].Message, "content changed")
	assert.Regexp(t, ` \(corrective\)$`, s.Events[0].Message)
	assert.Regexp(t, ` \(corrective\)$`, logLine(rep, path+"/content"))
	assert.False(t, status(t, rep, "Notify[n]").CorrectiveChange, "a notify's message is never corrective")

	// The catalog asks for new content: intentional.
	rep, _ = applied(t, file("b\n", "0644"), o)
	s = status(t, rep, "File["+f+"]")
	require.Len(t, s.Events, 1)
	assert.False(t, s.Events[0].CorrectiveChange)
	assert.NotContains(t, logLine(rep, path+"/content"), "corrective")

	// A property that was in sync all along (no event ever) drifts: the
	// catalog still asks what it asked, so setting it back is corrective.
	rep, _ = applied(t, file("b\n", "0644"), o)
	assert.Empty(t, status(t, rep, "File["+f+"]").Events)
	require.NoError(t, os.Chmod(f, 0o600))
	rep, _ = applied(t, file("b\n", "0644"), o)
	s = status(t, rep, "File["+f+"]")
	require.Len(t, s.Events, 1)
	assert.Equal(t, "mode", s.Events[0].Property)
	assert.True(t, s.Events[0].CorrectiveChange)

	// Without a store (receiver apply, puppet apply) nothing is corrective.
	require.NoError(t, os.WriteFile(f, []byte("tampered\n"), 0o644))
	rep, _ = applied(t, file("b\n", "0644"), catalog.Options{})
	assert.False(t, status(t, rep, "File["+f+"]").CorrectiveChange)

	// A store that is not JSON is replaced, the run goes on.
	require.NoError(t, os.WriteFile(store, []byte("{not json"), 0o600))
	rep, out = applied(t, file("c\n", "0644"), o)
	assert.True(t, status(t, rep, "File["+f+"]").Changed)
	assert.Contains(t, out, "is corrupt")
	b, err := os.ReadFile(store)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"resources"`)
}

// A file given by its source: Puppet's store keeps its content (the
// source's checksum) too, so a tampered file set back is corrective, and
// a new source is not.
func TestCorrectiveChangeSourcedFile(t *testing.T) {
	dir := t.TempDir()
	f, src := filepath.Join(dir, "f"), filepath.Join(dir, "src")
	o := catalog.Options{TransactionStore: filepath.Join(dir, "state", "transactionstore.json")}
	cat := build(t, res{typ: "File", title: f, params: map[string]any{"ensure": "file", "source": src}})
	content := func(rep *report.Report) *report.Event {
		s := status(t, rep, "File["+f+"]")
		for i := range s.Events {
			if s.Events[i].Property == "content" {
				return &s.Events[i]
			}
		}
		t.Fatalf("no content event: %+v", s.Events)
		return nil
	}
	require.NoError(t, os.WriteFile(src, []byte("one\n"), 0o644))
	applied(t, cat, o) // created

	require.NoError(t, os.WriteFile(f, []byte("tampered\n"), 0o644))
	rep, out := applied(t, cat, o)
	assert.True(t, content(rep).CorrectiveChange, "set back from the source: corrective")
	assert.Contains(t, out, " (corrective)")

	require.NoError(t, os.WriteFile(src, []byte("two\n"), 0o644))
	rep, out = applied(t, cat, o)
	assert.False(t, content(rep).CorrectiveChange, "the source changed: intentional")
	assert.NotContains(t, out, "corrective")
}
