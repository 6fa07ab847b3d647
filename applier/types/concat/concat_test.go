package concat_test

import (
	"testing"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/engine"
	"github.com/pippet/pippet/applier/types/concat"
	_ "github.com/pippet/pippet/applier/types/file" // the target's type, found by name
	"github.com/pippet/pippet/applier/typetest/puppetcase"
)

func testEngine() *engine.Engine {
	reg := applier.NewRegistry()
	reg.Add(concat.FileType)
	reg.Add(concat.FragmentType)
	return engine.New(reg, nil)
}

// TestPuppetCases replays what Puppet with concat 7.3 did (recorded by
// puppetcase/record into testdata/puppet_cases.json), each case's
// resources in a hand-made run (puppetcase.Run) as a catalog gives them.
func TestPuppetCases(t *testing.T) {
	puppetcase.Replay(t, "testdata/puppet_cases.json", testEngine())
}
