package cli

import (
	"bytes"
	"flag"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A one-letter flag is spelt with one dash, as the usage line and Puppet
// spell it (`-e CODE`), the others with two.
func TestPrintFlagsDashes(t *testing.T) {
	fs := flag.NewFlagSet("receiver apply", flag.ContinueOnError)
	fs.String("e", "", "compile this manifest `code` with Puppet, then apply it")
	fs.Bool("noop", false, "change nothing")
	fs.String("log-level", "notice", "the least severe `level` logged")
	var b bytes.Buffer
	PrintFlags(&b, fs)
	assert.Equal(t, "  -e CODE\n      compile this manifest code with Puppet, then apply it\n"+
		"  --log-level LEVEL\n      the least severe level logged (default notice)\n"+
		"  --noop\n      change nothing\n", b.String())
}
