package augeas_test

import (
	"testing"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/engine"
	"github.com/pippet/pippet/applier/types/augeas"
	"github.com/pippet/pippet/applier/typetest/puppetcase"
)

func testEngine() *engine.Engine {
	reg := applier.NewRegistry()
	reg.Add(augeas.Type)
	return engine.New(reg, nil)
}

// TestPuppetCases replays what Puppet with augeas_core did (recorded by
// puppetcase/record into testdata/puppet_cases.json).
func TestPuppetCases(t *testing.T) {
	puppetcase.Replay(t, "testdata/puppet_cases.json", testEngine())
}
