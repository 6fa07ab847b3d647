package integration

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/internal/testutil"
)

// A UTF-8 byte order mark at the start of the input (as editors and
// Windows tools write) is skipped, in either request form; one starting a
// later line is refused by name.
func TestByteOrderMark(t *testing.T) {
	const bom = "\ufeff"
	tests := []struct {
		name, in string
		want     []string // per answer: the resource, or "error: " and a part of the message
	}{
		{"json", bom + `{"type":"notify","title":"a","params":"{}"}` + "\n", []string{"Notify[a]"}},
		{"legacy", bom + "notify a {message: hi}\n", []string{"Notify[a]"}},
		{"comment first", bom + "# requests\n" + `{"type":"notify","title":"a","params":"{}"}` + "\n", []string{"Notify[a]"}},
		{"later line", `{"type":"notify","title":"a","params":"{}"}` + "\n" + bom + `{"type":"notify","title":"b","params":"{}"}` + "\n",
			[]string{"Notify[a]", "error: byte order mark (U+FEFF)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, stderr, code := run(t, t.TempDir(), strings.NewReader(tt.in), "--no-banner")
			require.Equal(t, 0, code, stderr)
			_, as := testutil.DecodeAnswers(t, out)
			require.Len(t, as, len(tt.want), out)
			for i, w := range tt.want {
				if msg, ok := strings.CutPrefix(w, "error: "); ok {
					assert.True(t, as[i].Error, out)
					require.NotNil(t, as[i].Exception, out)
					assert.Contains(t, *as[i].Exception, msg)
					continue
				}
				require.NotNil(t, as[i].Resource, out)
				assert.Equal(t, w, *as[i].Resource)
				assert.False(t, as[i].Failed, out)
			}
		})
	}
}

// A YAML mistake in params is answered as an error naming the resource,
// the line and column within the params and, where the cause is a plain
// value YAML reads as structure, how to quote it; nothing is applied and
// the next request is served.
func TestYAMLErrorAnswers(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "motd")
	in := `{"type":"file","title":"` + target + `","params":"{ensure: file, content: key: value}"}` + "\n" +
		`{"type":"file","title":"` + target + `","params":"ensure: file\nmode: '0644'\ncontent: key: value\n"}` + "\n" +
		`file ` + target + ` {ensure: file, content: @home}` + "\n" +
		`{"type":"file","title":"` + target + `","params":"ensure: file\ncontent: |\n  a\n b\n"}` + "\n" +
		`{"type":"notify","title":"after","params":"{}"}` + "\n"
	out, stderr, code := run(t, dir, strings.NewReader(in), "--no-banner")
	require.Equal(t, 0, code, stderr)
	_, as := testutil.DecodeAnswers(t, out)
	require.Len(t, as, 5, out)
	want := []string{
		"params: line 1 column 28: invalid YAML: did not find expected ',' or '}'; a value containing \": \" must be quoted, as in 'key: value'",
		"params: line 3 column 13: invalid YAML: mapping values are not allowed in this context; a value containing \": \" must be quoted, as in 'key: value'",
		"params: line 1 column 25: invalid YAML: found character that cannot start any token; a value starting with '@' must be quoted, as in '@home'",
		"params: line 4 column 2: invalid YAML: did not find expected key",
	}
	for i, w := range want {
		a := as[i]
		require.NotNil(t, a.Resource, out)
		assert.Equal(t, "File["+target+"]", *a.Resource)
		assert.True(t, a.Error, out)
		require.NotNil(t, a.Exception, out)
		assert.Contains(t, *a.Exception, w)
	}
	assert.False(t, as[4].Failed, out)
	assert.NoFileExists(t, target)
}

// Typos get help: a misspelt attribute, type or enum value is answered with
// the closest name (only when one is close), an unquoted number for a file
// mode is told to be quoted, and so is a value cut at a comma; a legacy
// line whose title has spaces is shown in the JSON form.
func TestTypoHints(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "motd")
	file := func(params string) string {
		return `{"type":"file","title":"` + target + `","params":"` + params + `"}` + "\n"
	}
	tests := []struct{ in, want string }{
		{file("{ensure: file, contnet: hi}"), "no parameter named 'contnet' on File[" + target + "]; did you mean 'content'?"},
		{file("{ensure: file, bogus: hi}"), "no parameter named 'bogus' on File[" + target + "]"},
		{`{"type":"flie","title":"` + target + `","params":"{}"}` + "\n", "unknown resource type 'flie'; did you mean 'file'?"},
		{`{"type":"starship","title":"x","params":"{}"}` + "\n", "unknown resource type 'starship'"},
		{`{"type":"exec","title":"/bin/true","params":"{logoutput: on_falure}"}` + "\n",
			`Parameter logoutput failed on Exec[/bin/true]: Invalid value "on_falure". Valid values are true, false, on_failure. Did you mean 'on_failure'?`},
		{file("{ensure: file, mode: 644}"), "Parameter mode failed on File[" + target + "]: the file mode specification must be a string, not 'Integer'; quote the mode as a string, e.g. '0644'"},
		{file("{ensure: file, mode: 0644}"), "quote the mode as a string, e.g. '0644'"},
		// Puppet's error, and what was probably meant: a symbolic mode
		// cut at its comma, a legacy line's title with spaces.
		{file("{ensure: file, mode: u=rw,go=r}"), "no parameter named 'go=r' on File[" + target + "]; " +
			"quote a value that holds a comma, as in mode: 'u=rw,go=r' (in a flow mapping a plain value ends at the first ',')"},
		{"exec run backup {command: /bin/true}\n", "no parameter named 'backup {command' on Exec[run]; " +
			`a title with spaces needs the JSON form: {"type":"exec","title":"run backup","params":"{command: /bin/true}"}`},
	}
	for _, tt := range tests {
		out, stderr, code := run(t, dir, strings.NewReader(tt.in), "--no-banner")
		require.Equal(t, 0, code, stderr)
		_, as := testutil.DecodeAnswers(t, out)
		require.Len(t, as, 1, out)
		assert.True(t, as[0].Error, out)
		require.NotNil(t, as[0].Exception, out)
		if strings.HasSuffix(tt.want, "?") || strings.Contains(tt.want, "quote the mode") {
			assert.Contains(t, *as[0].Exception, tt.want)
		} else {
			assert.Equal(t, tt.want, *as[0].Exception, "no suggestion when nothing is close")
		}
	}
	assert.NoFileExists(t, target)
}
