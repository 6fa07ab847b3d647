package augeas_test

import (
	"testing"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/engine"
	"github.com/pippet/pippet/applier/types/augeas"
	"github.com/pippet/pippet/applier/typetest/puppetcase"
)

// testEngine has a state directory of the test's own: a change backs up
// the old file to its filebucket, never to the machine's.
func testEngine(t *testing.T) *engine.Engine {
	reg := applier.NewRegistry()
	reg.Add(augeas.Type)
	return engine.New(reg, &applier.Env{Options: applier.Options{StateDir: t.TempDir()}})
}

// TestPuppetCases replays what Puppet with augeas_core did (recorded by
// puppetcase/record into testdata/puppet_cases.json).
func TestPuppetCases(t *testing.T) {
	puppetcase.Replay(t, "testdata/puppet_cases.json", testEngine(t))
}
