package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tidy's backup through the built receiver: the files it removes are in
// the filebucket `receiver filebucket list` shows, and `filebucket get`
// gives their content back; a directory is removed without a backup.
func TestTidyBackupToFilebucket(t *testing.T) {
	root, state := t.TempDir(), t.TempDir()
	old := time.Now().Add(-30 * 24 * time.Hour)
	files := map[string]string{"a.log": "first\n", "sub/b.log": "second\n"}
	for name, content := range files {
		p := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		require.NoError(t, os.Chtimes(p, old, old))
	}
	require.NoError(t, os.Chtimes(filepath.Join(root, "sub"), old, old))
	line := `{"type":"tidy","title":"` + root + `","params":"{age: 1w, recurse: true, rmdirs: true, backup: main}"}` + "\n"
	out, stderr, code := runWith(t, root, strings.NewReader(line), "--no-banner", "--state-dir", state)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, `"changed":true`, out)
	entries, _ := os.ReadDir(root)
	assert.Empty(t, entries, "everything old was tidied")

	list, stderr, code := runWith(t, root, nil, "filebucket", "--state-dir", state, "list")
	require.Equal(t, 0, code, stderr)
	rows := strings.Split(strings.TrimRight(list, "\n"), "\n")
	require.Len(t, rows, 2, "one backup per removed file, none for the directory: %q", list)
	for name, content := range files {
		var sum string
		for _, r := range rows {
			if strings.HasSuffix(r, " "+filepath.Join(root, name)) {
				sum = strings.Fields(r)[0]
			}
		}
		require.NotEmpty(t, sum, "%s listed: %q", name, list)
		got, stderr, code := runWith(t, root, nil, "filebucket", "--state-dir", state, "get", sum)
		require.Equal(t, 0, code, stderr)
		assert.Equal(t, content, got, name)
	}
}
