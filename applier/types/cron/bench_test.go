package cron_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/types/cron"
	"github.com/pippet/pippet/applier/typetest"
)

// BenchmarkUnchanged: requests naming 1,000 different jobs of one
// crontab, all in sync (the cache path: a stat of the spool file).
func BenchmarkUnchanged(b *testing.B) {
	testUser(b, "pipcron9", 47518)
	var tab strings.Builder
	for i := 0; i < 1000; i++ {
		fmt.Fprintf(&tab, "# Puppet Name: j%d\n%d * * * * /bin/true %d\n", i, i%60, i)
	}
	install(b, "pipcron9", tab.String())
	e := typetest.New(b, []*applier.Type{cron.Type})
	lines := make([]string, 1000)
	for i := range lines {
		k := strconv.Itoa(i)
		lines[i] = `{"type":"cron","title":"j` + k + `","params":"{user: pipcron9, command: /bin/true ` + k + `, minute: ` + strconv.Itoa(i%60) + `}"}`
	}
	e.BenchUnchanged(b, lines)
}
