package puppetserver

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/agent/facts"
	agentserver "github.com/pippet/pippet/agent/server"
	"github.com/pippet/pippet/agent/ssl"
	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/engine"
	"github.com/pippet/pippet/applier/source"
	"github.com/pippet/pippet/applier/types/file"
	"github.com/pippet/pippet/catalog"
	"github.com/pippet/pippet/report"
)

// The agent's catalog against the real server: two environments of
// their own (pippetcat, pippetcat2) so that no other test's manifests
// meet these, a module pcatmod with the files the catalog's File
// resources copy, and versioned code (a code-id-command and a
// code-content-command) so that the server compiles static catalogs.
const (
	catEnv     = "pippetcat"
	catEnv2    = "pippetcat2"
	catCodeID  = "pippetcode1"
	catMotd    = "motd from pcatmod\n"
	catNowhere = "pippet_catalog_nosuch"
)

func init() {
	fixtures = append(fixtures, func(s *server) error {
		envs := filepath.Join(s.dir, "code", "environments")
		mod := filepath.Join(envs, catEnv, "modules", "pcatmod", "files")
		for name, data := range map[string]string{
			filepath.Join(mod, "motd"):       catMotd,
			filepath.Join(mod, "tree/a"):     "tree a\n",
			filepath.Join(mod, "tree/sub/b"): "tree b\n",
			filepath.Join(envs, catEnv, "manifests", "site.pp"): `node default {
  notify { 'pippetcat facts': message => "family ${facts['os']['family']} legacy ${facts['osfamily']} cert ${facts['clientcert']}" }
  file { "${facts['pippetcat_dir']}/motd": source => 'puppet:///modules/pcatmod/motd' }
  file { "${facts['pippetcat_dir']}/list": source => ['puppet:///modules/pcatmod/nope', 'puppet:///modules/pcatmod/motd'] }
  file { "${facts['pippetcat_dir']}/tree": source => 'puppet:///modules/pcatmod/tree', recurse => true }
}
`,
			filepath.Join(envs, catEnv2, "manifests", "site.pp"): `notify { 'pippetcat2': message => "the second environment" }
`,
			// puppetserver runs code-id-command ENV and
			// code-content-command ENV CODE_ID PATH.
			filepath.Join(s.dir, "code-id"):      "#!/bin/sh\necho " + catCodeID + "\n",
			filepath.Join(s.dir, "code-content"): "#!/bin/sh\n[ \"$2\" = " + catCodeID + " ] || exit 1\nexec cat \"" + envs + "/$1/$3\"\n",
		} {
			if err := write(name, data); err != nil {
				return err
			}
		}
		for _, f := range []string{"code-id", "code-content"} {
			if err := os.Chmod(filepath.Join(s.dir, f), 0o755); err != nil {
				return err
			}
		}
		serverConf = append(serverConf, fmt.Sprintf("versioned-code: {\n    code-id-command: %q\n    code-content-command: %q\n}\n",
			filepath.Join(s.dir, "code-id"), filepath.Join(s.dir, "code-content")))
		return nil
	})
}

// catalogClient is the agent's client of the test server, as agent1.
func catalogClient(t *testing.T, s *server) *agentserver.Client {
	t.Helper()
	cfg, err := ssl.Files{Dir: s.agentSSL, Certname: "agent1"}.TLSConfig()
	require.NoError(t, err)
	return agentserver.New(agentserver.HTTPClient(cfg, 10*time.Second, 2*time.Minute), fmt.Sprintf("https://localhost:%d", s.port), "agent1")
}

// agentFacts are this machine's facts (legacy names included, as the
// agent sends them) and the directory the manifest's files go to.
func agentFacts(t *testing.T, dir string) ([]byte, facts.Facts) {
	t.Helper()
	f, _ := facts.Gather(context.Background(), facts.Options{ExternalDirs: []string{}})
	f["pippetcat_dir"] = dir
	b, err := agentserver.FactsJSON("agent1", f, agentserver.FactsOptions{})
	require.NoError(t, err)
	return b, f
}

// settleCount waits until the access log has want lines matching re
// (it trails the answers), then counts them.
func (s *server) settleCount(t *testing.T, re string, want int) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for s.count(t, re) < want && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	return s.count(t, re)
}

// count counts the access log's lines matching re.
func (s *server) count(t *testing.T, re string) int {
	t.Helper()
	b, err := os.ReadFile(s.access)
	require.NoError(t, err)
	return len(regexp.MustCompile(re).FindAll(b, -1))
}

func catalogMessage(c *catalog.Catalog, title string) string {
	for _, r := range c.Resources {
		if r.Type == "Notify" && r.Title == title {
			m, _ := r.Params["message"].(string)
			return m
		}
	}
	return ""
}

// applyFiles applies the catalog's File resources natively, the
// static catalog's metadata given to the file type and puppet:// sources
// read through the agent's own client.
func applyFiles(t *testing.T, cat *catalog.Catalog, po *source.PuppetOptions) *report.Report {
	t.Helper()
	st, err := cat.Static()
	require.NoError(t, err)
	env := &applier.Env{Options: applier.Options{StateDir: t.TempDir()}}
	file.SetSourceOptions(env, source.Options{Puppet: po, Static: st})
	g, err := catalog.Build(cat, applier.Default)
	require.NoError(t, err)
	eng := engine.New(applier.Default, env)
	return catalog.Apply(context.Background(), g, eng.NewSession(), catalog.Options{Tags: []string{"file"}})
}

func TestAgentCatalogStaticFromServer(t *testing.T) {
	s := need(t)
	ctx := context.Background()
	c := catalogClient(t, s)
	dir := t.TempDir()

	// The node request: the node's environment is the one asked (no ENC).
	env, err := c.Node(ctx, catEnv, nil, "0f1e2d3c-aaaa-bbbb-cccc-000000000001")
	require.NoError(t, err)
	assert.Equal(t, catEnv, env)
	assert.Equal(t, 1, s.settleCount(t, `"GET /puppet/v3/node/agent1\?[^"]*environment=`+catEnv+`[& ][^"]*" 200`, 1))

	// The catalog, compiled with the facts sent.
	factsJSON, f := agentFacts(t, dir)
	cat, raw, err := c.Catalog(ctx, catEnv, factsJSON, "0f1e2d3c-aaaa-bbbb-cccc-000000000001")
	require.NoError(t, err)
	require.NotEmpty(t, raw)
	family, _ := f.Get("os.family")
	require.NotEmpty(t, family)
	assert.Equal(t, fmt.Sprintf("family %s legacy %s cert agent1", family, f["osfamily"]), catalogMessage(cat, "pippetcat facts"),
		"the server saw the facts sent, legacy names and clientcert included")
	assert.Equal(t, catEnv, cat.Environment)
	assert.Equal(t, "agent1", cat.Name)

	// A static catalog: the code_id and the sources' metadata inlined.
	assert.Equal(t, catCodeID, cat.CodeID)
	assert.Equal(t, 2, cat.Format)
	require.Contains(t, cat.Metadata, dir+"/motd", "inlined: %s", raw)
	require.Contains(t, cat.Metadata, dir+"/list")
	require.Contains(t, cat.RecursiveMetadata, dir+"/tree")
	st, err := cat.Static()
	require.NoError(t, err)
	m, ok := st.File(dir + "/list")
	require.True(t, ok)
	assert.Equal(t, "puppet:///modules/pcatmod/motd", m.Source, "the source that exists")
	assert.Equal(t, "puppet:///modules/pcatmod/files/motd", m.ContentURI)
	assert.Equal(t, source.SumString("sha256", catMotd), m.Checksum)

	// Applied: no file_metadata(s) for the inlined files; their content
	// from static_file_content at the catalog's code_id.
	meta0 := s.count(t, `"GET /puppet/v3/file_metadatas?/modules/pcatmod/`)
	static0 := s.count(t, `"GET /puppet/v3/static_file_content/modules/pcatmod/files/[^"]*code_id=`+catCodeID)
	po := &source.PuppetOptions{Server: "localhost", Port: s.port, Environment: cat.Environment, Client: clientOf(t, s)}
	rep := applyFiles(t, cat, po)
	for _, st := range rep.Statuses {
		assert.False(t, st.Failed, "%s: %+v", st.Resource, st.Events)
	}
	assert.Equal(t, catMotd, read(t, filepath.Join(dir, "motd")))
	assert.Equal(t, catMotd, read(t, filepath.Join(dir, "list")))
	assert.Equal(t, "tree a\n", read(t, filepath.Join(dir, "tree", "a")))
	assert.Equal(t, "tree b\n", read(t, filepath.Join(dir, "tree", "sub", "b")))
	time.Sleep(500 * time.Millisecond) // the access log trails the answers
	assert.Equal(t, meta0, s.count(t, `"GET /puppet/v3/file_metadatas?/modules/pcatmod/`), "no metadata asked for inlined files")
	assert.Equal(t, 4, s.count(t, `"GET /puppet/v3/static_file_content/modules/pcatmod/files/[^"]*code_id=`+catCodeID+`[^"]*" 200`)-static0)
	assert.Zero(t, s.count(t, `"GET /puppet/v3/file_content/modules/pcatmod/`))

	// A second run: all unchanged, nothing fetched.
	rep = applyFiles(t, cat, po)
	for _, st := range rep.Statuses {
		assert.False(t, st.Failed || st.Changed, "%s", st.Resource)
	}
	time.Sleep(500 * time.Millisecond)
	assert.Equal(t, 4, s.count(t, `"GET /puppet/v3/static_file_content/modules/pcatmod/`)-static0)
	assert.Equal(t, meta0, s.count(t, `"GET /puppet/v3/file_metadatas?/modules/pcatmod/`))
}

// clientOf is a second client of the agent's for puppet:// sources.
func clientOf(t *testing.T, s *server) *http.Client {
	t.Helper()
	cfg, err := ssl.Files{Dir: s.agentSSL, Certname: "agent1"}.TLSConfig()
	require.NoError(t, err)
	return agentserver.HTTPClient(cfg, 10*time.Second, time.Minute)
}

func TestAgentCatalogCacheAndEnvironments(t *testing.T) {
	s := need(t)
	ctx := context.Background()
	c := catalogClient(t, s)
	dir := t.TempDir()
	cacheDir := t.TempDir()
	var logbuf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logbuf, nil))
	factsJSON, _ := agentFacts(t, dir)
	o := agentserver.Options{
		Environment: catEnv, CacheDir: cacheDir, UseCacheOnFailure: true, TransactionUUID: "0f1e2d3c-aaaa-bbbb-cccc-000000000002", Log: log,
		Prepare: func(context.Context, string) ([]byte, error) { return factsJSON, nil },
	}
	res, err := c.Retrieve(ctx, o)
	require.NoError(t, err)
	assert.Equal(t, agentserver.CacheNotUsed, res.CachedCatalogStatus)
	cached, raw, err := agentserver.LoadCache(cacheDir, "agent1")
	require.NoError(t, err)
	assert.Equal(t, res.Raw, raw)
	assert.Equal(t, catEnv, cached.Environment)
	fi, err := os.Stat(filepath.Join(cacheDir, "catalog", "agent1.json"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o660), fi.Mode().Perm())

	// The server's URL is wrong (nothing listens there): the cached
	// catalog runs.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cfg, err := ssl.Files{Dir: s.agentSSL, Certname: "agent1"}.TLSConfig()
	require.NoError(t, err)
	wrong := agentserver.New(agentserver.HTTPClient(cfg, 5*time.Second, time.Minute), fmt.Sprintf("https://localhost:%d", dead), "agent1")
	logbuf.Reset()
	res, err = wrong.Retrieve(ctx, o)
	require.NoError(t, err)
	assert.Equal(t, agentserver.CacheOnFailure, res.CachedCatalogStatus)
	assert.True(t, res.Cached)
	assert.Equal(t, raw, res.Raw)
	assert.Contains(t, logbuf.String(), "Could not retrieve catalog from remote server: Request to https://localhost:")
	assert.Contains(t, logbuf.String(), "connection refused")
	assert.Contains(t, logbuf.String(), `msg="Using cached catalog from environment 'pippetcat'"`)

	// The second environment: its own catalog, cached in place of the first.
	o.Environment = catEnv2
	res, err = c.Retrieve(ctx, o)
	require.NoError(t, err)
	assert.Equal(t, catEnv2, res.Environment)
	assert.Equal(t, "the second environment", catalogMessage(res.Catalog, "pippetcat2"))
	cached, _, err = agentserver.LoadCache(cacheDir, "agent1")
	require.NoError(t, err)
	assert.Equal(t, catEnv2, cached.Environment)

	// An environment the server does not have: the node request is
	// refused in Puppet's words; the catalog request is answered with an
	// empty catalog of the environment the server falls back on
	// (production), so the agent moves there, as Puppet's agent does.
	_, err = c.Node(ctx, catNowhere, nil, "u")
	var he *agentserver.HTTPError
	require.ErrorAs(t, err, &he)
	assert.True(t, he.EnvironmentNotFound(), "%v", err)
	assert.Equal(t, "Find /puppet/v3/node/agent1 resulted in 404 with the message: {\"message\":\"Not Found: Could not find environment '"+catNowhere+"'\",\"issue_kind\":\"RUNTIME_ERROR\"}", err.Error())
	nc, _, err := c.Catalog(ctx, catNowhere, factsJSON, "u")
	require.NoError(t, err)
	assert.Equal(t, "production", nc.Environment)

	o.Environment = catNowhere
	o.StrictEnvironmentMode = true
	logbuf.Reset()
	_, err = c.Retrieve(ctx, o)
	require.ErrorIs(t, err, agentserver.ErrNoCatalog)
	assert.Contains(t, err.Error(), "Not using catalog because its environment 'production' does not match agent specified environment '"+catNowhere+"' and strict_environment_mode is set")
	assert.Contains(t, logbuf.String(), "level=ERROR msg=\"Not using catalog because its environment 'production'")

	o.StrictEnvironmentMode = false
	logbuf.Reset()
	post0 := s.count(t, `"POST /puppet/v3/catalog/agent1\?environment=production `)
	_, err = c.Retrieve(ctx, o)
	out := logbuf.String()
	assert.Contains(t, out, "Unable to fetch my node definition, but the agent run will continue:")
	assert.Contains(t, out, "Find /puppet/v3/node/agent1 resulted in 404 with the message:")
	assert.Contains(t, out, "Local environment: '"+catNowhere+"' doesn't match server specified environment 'production', restarting agent run with environment 'production'")
	assert.Equal(t, post0+1, s.settleCount(t, `"POST /puppet/v3/catalog/agent1\?environment=production `, post0+1))
	t.Logf("a missing environment, as logged (then production's catalog: %v):\n%s", err, out)
}
