package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A ratio below 1 is explained under the table, naming the rows, and a
// quick run is told where figures to quote come from.
func TestBelowOne(t *testing.T) {
	quick := belowOne([]string{"file create", "file content change"}, 200, 1)
	assert.Contains(t, quick, "(file create; file content change)")
	assert.Contains(t, quick, "journal commit")
	assert.Contains(t, quick, "not of N = 200 with 1 run(s)")
	full := belowOne([]string{"file create"}, 10000, 5)
	assert.NotContains(t, full, "make bench")
	assert.True(t, strings.HasSuffix(full, "work itself.\n"), full)
}
