package puppetserver

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAgentServerListAndResubmitFacts: server_list's first entry is a
// closed port, its second the real server: receiver agent, as Puppet's
// own agent on the same node, warns about the first and runs against the
// second. With resubmit_facts the facts are sent again after the apply:
// the server's stored facts then hold an external fact the
// prerun_command (between the catalog and the apply) wrote.
func TestAgentServerListAndResubmitFacts(t *testing.T) {
	s := need(t)
	n := newNode(t, s, "servers2-failover")
	n.env = "production"
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	list := fmt.Sprintf("127.0.0.1:%d,localhost:%d", closed, s.port)
	warn := regexp.MustCompile(`Warning: Unable to connect to server from server_list setting: Request to (\S+) failed after`)

	// Puppet's agent, its own vardir.
	pvardir := filepath.Join(n.dir, "pvar")
	pconf := n.puppetConf(t, s, "puppet", pvardir, "server_list = "+list)
	code, pout := runPuppetAgent(t, n, pconf)
	require.Equal(t, 0, code, pout)
	pm := warn.FindStringSubmatch(pout)
	require.NotNil(t, pm, pout)

	vardir := filepath.Join(n.dir, "var")
	factsd := filepath.Join(vardir, "facts.d")
	conf := n.puppetConf(t, s, "pippet", vardir, "server_list = "+list, "resubmit_facts = true",
		fmt.Sprintf("prerun_command = mkdir -p %[1]s && echo servers2_resubmitted=after_the_catalog > %[1]s/servers2.txt", factsd))
	code, out, errs := runReceiverAgent(t, n, conf, "-t")
	require.Equal(t, 0, code, "%s%s", out, errs)
	m := warn.FindStringSubmatch(out + errs)
	require.NotNil(t, m, "%s%s", out, errs)
	assert.Equal(t, pm[1], m[1], "the same status request")
	assert.Contains(t, out+errs, "Trying with next server from server_list.\n")
	assert.Contains(t, out, "Info: Uploading facts for servers2-failover to localhost\n")

	rep := stored(t, s, n.certname, lastUUID(t, vardir))
	assert.Equal(t, fmt.Sprintf("localhost:%d", s.port), rep["server_used"])

	// Puppet Server's facts terminus is json: server_datadir/facts.
	b, err := os.ReadFile(filepath.Join(s.dir, "var", "server_data", "facts", n.certname+".json"))
	require.NoError(t, err)
	var doc struct {
		Values map[string]any `json:"values"`
	}
	require.NoError(t, json.Unmarshal(b, &doc))
	assert.Equal(t, "after_the_catalog", doc.Values["servers2_resubmitted"], "the facts sent after the apply")
}
