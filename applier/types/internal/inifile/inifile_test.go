package inifile_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/pippet/pippet/applier/types/internal/inifile"
)

// FuzzLookup holds the fast read of a converged request to the full
// parse: the same value, presence and section for any file and key.
func FuzzLookup(f *testing.F) {
	for _, s := range []string{
		"", "a = 1\n", "[s]\na = 1\n", "[s]\na = 1\n[s]\nb = 2\n", "[s]\na = 1\n[t]\n[s]\na = 3\n",
		"  [ s ]  \n  a=1  \n; a = 2\n", "[]\na = 1\n", "a = 0\n[s]\na = 1", "[s]\r\na = 1\r\n",
		"[s]\n[s]a = 1\n", "[s]\na b = 1\n#a = 2\n", "[s]\n  a  =   spaced  \n",
	} {
		f.Add(s, "s", "a")
		f.Add(s, "", "a")
	}
	f.Fuzz(func(t *testing.T, content, sect, key string) {
		o := inifile.Options{KeyValSeparator: " = ", IndentWidth: -1}
		file, err := inifile.Parse([]byte(content), o)
		if err != nil {
			t.Skip()
		}
		wantV, wantOK := file.Get(sect, key)
		v, ok, has, err := inifile.Lookup([]byte(content), o, sect, key)
		assert.NoError(t, err)
		assert.Equal(t, wantOK, ok, "found")
		assert.Equal(t, wantV, v, "value")
		assert.Equal(t, file.HasSection(sect), has, "section")
	})
}
