package catalog_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/catalog"
)

// TestRefusedAsPuppetRefuses: catalogs Puppet 7 refuses before it
// applies anything (`puppet apply --catalog testdata/refused/NAME.json`,
// its error line kept in NAME.puppet.txt) are refused by Build with
// Puppet's message: two File resources for one path (a title and
// another's path, or "/a/" and "/a"), a schedule Puppet cannot parse, a
// resource naming a schedule the catalog lacks. The catalogs whose
// Puppet answer is empty apply.
func TestRefusedAsPuppetRefuses(t *testing.T) {
	for _, name := range []string{"dup1", "dup2", "dup3", "sch1", "sch2", "sch3", "sch4", "sch5", "sch6", "sch7", "sch8", "sch9"} {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "refused", name+".json"))
			require.NoError(t, err)
			want, err := os.ReadFile(filepath.Join("testdata", "refused", name+".puppet.txt"))
			require.NoError(t, err)
			c, err := catalog.Parse(bytes.NewReader(data))
			require.NoError(t, err)
			_, err = catalog.Build(c, applier.Default)
			line := strings.TrimSpace(string(want))
			if line == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			// Puppet's frame ("Error: Could not run: ", "Error: Failed
			// to apply catalog: ") is the command's; the reason is Build's.
			_, reason, _ := strings.Cut(line, ": ")
			_, reason, _ = strings.Cut(reason, ": ")
			assert.Equal(t, reason, err.Error())
		})
	}
}
