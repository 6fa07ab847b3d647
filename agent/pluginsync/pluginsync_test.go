package pluginsync_test

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/agent/pluginsync"
	"github.com/pippet/pippet/agent/ssl"
	"github.com/pippet/pippet/applier/source"
	"github.com/pippet/pippet/applier/source/sourcetest"
	"github.com/pippet/pippet/internal/puppetlog"
	"github.com/pippet/pippet/internal/testutil"
)

// fixture is a fake Puppet Server serving a plugins and a pluginfacts
// directory, and an agent's vardir.
type fixture struct {
	fs             *sourcetest.FileServer
	plugins, facts string
	vardir         string
	opts           pluginsync.Options
	log            testutil.SyncBuffer
	handler        http.Handler // when set, answers instead of fs
}

func (f *fixture) logged() string { return f.log.Take() }

func newFixture(t testing.TB) *fixture {
	t.Helper()
	f := &fixture{plugins: t.TempDir(), facts: t.TempDir(), vardir: filepath.Join(t.TempDir(), "cache")}
	f.fs = sourcetest.NewFileServer(map[string]string{"plugins": f.plugins, "pluginfacts": f.facts})
	ca := sourcetest.NewPuppetCA(t, false)
	srv := ca.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.handler != nil {
			f.handler.ServeHTTP(w, r)
			return
		}
		f.fs.ServeHTTP(w, r)
	}), "")
	cfg, err := ssl.Files{Dir: ca.SSLDir, Certname: ca.Certname}.TLSConfig()
	require.NoError(t, err)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}}
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	f.opts = pluginsync.Options{
		Client: client, Server: "https://localhost:" + port, Environment: "pippetplug",
		Vardir: f.vardir, Log: slog.New(puppetlog.New(&f.log, slog.LevelDebug)),
	}
	return f
}

func put(t testing.TB, dir, rel, content string, mode os.FileMode) {
	t.Helper()
	p := filepath.Join(dir, rel)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), mode))
	require.NoError(t, os.Chmod(p, mode))
}

func ino(t *testing.T, p string) uint64 {
	t.Helper()
	fi, err := os.Lstat(p)
	require.NoError(t, err)
	return fi.Sys().(*syscall.Stat_t).Ino
}

func mode(t *testing.T, p string) os.FileMode {
	t.Helper()
	fi, err := os.Lstat(p)
	require.NoError(t, err)
	return fi.Mode().Perm()
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}

func TestSyncWritesThenLeavesUnchangedFilesAlone(t *testing.T) {
	f := newFixture(t)
	put(t, f.plugins, "puppet/type/pippetplug.rb", "Puppet::Type.newtype(:pippetplug) do\nend\n", 0o600)
	put(t, f.plugins, "facter/pippetplug.rb", "Facter.add(:pippetplug) { setcode { 'x' } }\n", 0o644)
	put(t, f.plugins, ".git/config", "not synced\n", 0o644)
	put(t, f.plugins, "puppet/CVS/Entries", "not synced\n", 0o644)
	require.NoError(t, os.Symlink("pippetplug.rb", filepath.Join(f.plugins, "facter", "alias.rb")))
	put(t, f.facts, "pippetplug.txt", "pippetplug_ext=yes\n", 0o644)
	put(t, f.facts, "pippetplug.sh", "#!/bin/sh\necho pippetplug_script=1\n", 0o750)
	ctx := context.Background()

	res, err := pluginsync.Sync(ctx, f.opts)
	require.NoError(t, err)
	lib, factsd := filepath.Join(f.vardir, "lib"), filepath.Join(f.vardir, "facts.d")
	assert.Equal(t, "Puppet::Type.newtype(:pippetplug) do\nend\n", read(t, filepath.Join(lib, "puppet/type/pippetplug.rb")))
	assert.Equal(t, "pippetplug_ext=yes\n", read(t, filepath.Join(factsd, "pippetplug.txt")))
	// links => follow: the server's link arrives as the file it points at.
	fi, err := os.Lstat(filepath.Join(lib, "facter/alias.rb"))
	require.NoError(t, err)
	assert.True(t, fi.Mode().IsRegular())
	assert.NoFileExists(t, filepath.Join(lib, ".git/config"))
	assert.NoDirExists(t, filepath.Join(lib, "puppet/CVS"))
	// plugins: source_permissions ignore, the default modes; pluginfacts:
	// use, the server's modes.
	assert.Equal(t, os.FileMode(0o644), mode(t, filepath.Join(lib, "puppet/type/pippetplug.rb")))
	assert.Equal(t, os.FileMode(0o755), mode(t, filepath.Join(lib, "puppet/type")))
	assert.Equal(t, os.FileMode(0o750), mode(t, filepath.Join(factsd, "pippetplug.sh")))
	assert.ElementsMatch(t, []string{
		factsd, filepath.Join(factsd, "pippetplug.sh"), filepath.Join(factsd, "pippetplug.txt"),
		lib, filepath.Join(lib, "facter"), filepath.Join(lib, "facter/alias.rb"), filepath.Join(lib, "facter/pippetplug.rb"),
		filepath.Join(lib, "puppet"), filepath.Join(lib, "puppet/type"), filepath.Join(lib, "puppet/type/pippetplug.rb"),
	}, res.Changed)
	assert.Empty(t, res.Removed)
	log := f.logged()
	assert.True(t, strings.HasPrefix(log, "Info: Retrieving pluginfacts\n"), log)
	assert.Contains(t, log, "\nInfo: Retrieving plugin\n")
	assert.Contains(t, log, "Notice: /File["+filepath.Join(lib, "puppet/type/pippetplug.rb")+"]/ensure: defined content as '{sha256}"+
		source.SumString("sha256", "Puppet::Type.newtype(:pippetplug) do\nend\n")+"'\n")
	assert.Contains(t, log, "Notice: /File["+filepath.Join(lib, "puppet/type")+"]/ensure: created\n")
	assert.Less(t, strings.Index(log, "pluginfacts"), strings.Index(log, "Retrieving plugin\n"), "pluginfacts first, as Puppet")
	assert.Equal(t, 5, f.fs.Count("file_content"), "one download per file")
	// As Puppet's agent: one listing per mount, whose root entry is the
	// destination's source metadata (no file_metadata of the mount).
	assert.Equal(t, 2, f.fs.Count("file_metadatas"))
	assert.Equal(t, 0, f.fs.Count("file_metadata"))
	for _, r := range f.fs.Requests() {
		if strings.HasPrefix(r, "/puppet/v3/file_metadatas/") {
			assert.Contains(t, r, "environment=pippetplug")
			assert.Contains(t, r, "links=follow")
			assert.Contains(t, r, "recurse=true")
			assert.Contains(t, r, "checksum_type=sha256")
			assert.Contains(t, r, "ignore=.git")
		}
	}

	// Second run: nothing downloaded, nothing written, nothing logged but
	// the two Info lines.
	before := ino(t, filepath.Join(lib, "puppet/type/pippetplug.rb"))
	f.fs.Reset()
	res, err = pluginsync.Sync(ctx, f.opts)
	require.NoError(t, err)
	assert.Empty(t, res.Changed)
	assert.Empty(t, res.Removed)
	assert.Equal(t, 0, f.fs.Count("file_content"))
	assert.Equal(t, 2, f.fs.Count("file_metadatas"))
	assert.Equal(t, 0, f.fs.Count("file_metadata"))
	assert.Equal(t, before, ino(t, filepath.Join(lib, "puppet/type/pippetplug.rb")))
	assert.Equal(t, "Info: Retrieving pluginfacts\nInfo: Retrieving plugin\n", f.logged())
}

func TestSyncChangesAndPurges(t *testing.T) {
	f := newFixture(t)
	put(t, f.plugins, "puppet/type/a.rb", "a1\n", 0o644)
	put(t, f.plugins, "puppet/type/b.rb", "b1\n", 0o644)
	put(t, f.plugins, "puppet/provider/b/x.rb", "x\n", 0o644)
	put(t, f.facts, "f.txt", "f=1\n", 0o644)
	ctx := context.Background()
	_, err := pluginsync.Sync(ctx, f.opts)
	require.NoError(t, err)
	lib := filepath.Join(f.vardir, "lib")
	// A file left locally by an earlier server, and a directory of them.
	put(t, lib, "stale.rb", "old\n", 0o644)
	put(t, lib, "old/deep/x.rb", "old\n", 0o644)
	f.logged()

	put(t, f.plugins, "puppet/type/a.rb", "a2\n", 0o644)
	require.NoError(t, os.Remove(filepath.Join(f.plugins, "puppet/type/b.rb")))
	require.NoError(t, os.RemoveAll(filepath.Join(f.plugins, "puppet/provider")))
	require.NoError(t, os.Chmod(filepath.Join(f.facts, "f.txt"), 0o600))
	f.fs.Reset()
	res, err := pluginsync.Sync(ctx, f.opts)
	require.NoError(t, err)
	assert.Equal(t, "a2\n", read(t, filepath.Join(lib, "puppet/type/a.rb")))
	for _, gone := range []string{"puppet/type/b.rb", "puppet/provider", "stale.rb", "old"} {
		assert.NoFileExists(t, filepath.Join(lib, gone))
		assert.NoDirExists(t, filepath.Join(lib, gone))
	}
	assert.Equal(t, []string{filepath.Join(f.vardir, "facts.d/f.txt"), filepath.Join(lib, "puppet/type/a.rb")}, res.Changed)
	assert.ElementsMatch(t, []string{filepath.Join(lib, "puppet/type/b.rb"), filepath.Join(lib, "puppet/provider"),
		filepath.Join(lib, "stale.rb"), filepath.Join(lib, "old")}, res.Removed)
	assert.Equal(t, 1, f.fs.Count("file_content"), "only the changed file is downloaded")
	assert.Equal(t, os.FileMode(0o600), mode(t, filepath.Join(f.vardir, "facts.d/f.txt")))
	log := f.logged()
	assert.Contains(t, log, "Notice: /File["+filepath.Join(lib, "puppet/type/a.rb")+"]/content: content changed '{sha256}"+
		source.SumString("sha256", "a1\n")+"' to '{sha256}"+source.SumString("sha256", "a2\n")+"'\n")
	assert.Contains(t, log, "Notice: /File["+filepath.Join(lib, "puppet/type/b.rb")+"]/ensure: removed\n")
	assert.Contains(t, log, "Notice: /File["+filepath.Join(f.vardir, "facts.d/f.txt")+"]/mode: mode changed '0644' to '0600'\n")
}

func TestSyncRefusesALinkedDestination(t *testing.T) {
	f := newFixture(t)
	put(t, f.plugins, "evil.rb", "x\n", 0o644)
	elsewhere := t.TempDir()
	put(t, elsewhere, "keep", "mine\n", 0o644)
	require.NoError(t, os.MkdirAll(f.vardir, 0o750))
	require.NoError(t, os.Symlink(elsewhere, filepath.Join(f.vardir, "lib")))
	_, err := pluginsync.Sync(context.Background(), f.opts)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Failed to retrieve plugin: "+filepath.Join(f.vardir, "lib")+" is a symbolic link")
	assert.Equal(t, "mine\n", read(t, filepath.Join(elsewhere, "keep")), "nothing purged through the link")
	assert.NoFileExists(t, filepath.Join(elsewhere, "evil.rb"))
}

func TestSyncNeverWritesThroughALinkBelow(t *testing.T) {
	f := newFixture(t)
	put(t, f.plugins, "puppet/type/x.rb", "x\n", 0o644)
	elsewhere := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(f.vardir, "lib"), 0o755))
	// Someone made lib/puppet a link to a directory of theirs.
	require.NoError(t, os.Symlink(elsewhere, filepath.Join(f.vardir, "lib", "puppet")))
	_, err := pluginsync.Sync(context.Background(), f.opts)
	require.NoError(t, err)
	assert.Equal(t, "x\n", read(t, filepath.Join(f.vardir, "lib/puppet/type/x.rb")))
	fi, err := os.Lstat(filepath.Join(f.vardir, "lib", "puppet"))
	require.NoError(t, err)
	assert.True(t, fi.IsDir(), "the link is replaced by a directory")
	ents, err := os.ReadDir(elsewhere)
	require.NoError(t, err)
	assert.Empty(t, ents, "nothing written through the link")
}

func TestSyncServerErrorIsPuppetsFailure(t *testing.T) {
	f := newFixture(t)
	f.handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		w.Write([]byte(`{"message":"Server Error: the compiler broke","issue_kind":"RUNTIME_ERROR"}`))
	})
	_, err := pluginsync.Sync(context.Background(), f.opts)
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "Failed to retrieve pluginfacts: "), err.Error())
	assert.Contains(t, err.Error(), "Error 500 on SERVER: Server Error: the compiler broke")
	assert.NoDirExists(t, filepath.Join(f.vardir, "lib"), "plugins are not tried after pluginfacts failed")
}

func TestSyncAnEmptyMountPurgesEverything(t *testing.T) {
	f := newFixture(t)
	put(t, f.plugins, "a.rb", "a\n", 0o644)
	_, err := pluginsync.Sync(context.Background(), f.opts)
	require.NoError(t, err)
	require.NoError(t, os.Remove(filepath.Join(f.plugins, "a.rb")))
	res, err := pluginsync.Sync(context.Background(), f.opts)
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(f.vardir, "lib/a.rb")}, res.Removed)
	assert.DirExists(t, filepath.Join(f.vardir, "lib"))
}

func TestSyncBadOptions(t *testing.T) {
	for _, o := range []pluginsync.Options{
		{Server: "https://localhost:8140", Vardir: "relative"},
		{Server: "http://localhost:8140", Vardir: "/tmp/x"},
		{Server: "https://localhost:99999", Vardir: "/tmp/x"},
	} {
		_, err := pluginsync.Sync(context.Background(), o)
		assert.Error(t, err, "%+v", o)
	}
}

func TestSyncAnEntryThatCannotBeWrittenFailsTheSync(t *testing.T) {
	f := newFixture(t)
	put(t, f.plugins, "a.rb", "a\n", 0o644)
	put(t, f.plugins, "bad.rb", "what the metadata promises\n", 0o644)
	put(t, f.plugins, "z.rb", "z\n", 0o644)
	// The server sends other bytes than its checksum says for bad.rb.
	f.handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/file_content/plugins/bad.rb") {
			w.Write([]byte("something else\n"))
			return
		}
		f.fs.ServeHTTP(w, r)
	})
	res, err := pluginsync.Sync(context.Background(), f.opts)
	require.Error(t, err)
	lib := filepath.Join(f.vardir, "lib")
	assert.True(t, strings.HasPrefix(err.Error(), "Failed to retrieve plugin: change from 'absent' to 'file' failed: "), err.Error())
	assert.NoFileExists(t, filepath.Join(lib, "bad.rb"), "nothing half-written")
	assert.Equal(t, "a\n", read(t, filepath.Join(lib, "a.rb")), "the other entries are synced")
	assert.Equal(t, "z\n", read(t, filepath.Join(lib, "z.rb")))
	assert.Contains(t, res.Changed, filepath.Join(lib, "z.rb"))
	assert.NotContains(t, res.Changed, filepath.Join(lib, "bad.rb"))
	log := f.logged()
	assert.Contains(t, log, "Notice: /File["+lib+"]/ensure: created\n")
	assert.Contains(t, res.Changed, lib)
	assert.Contains(t, log, "Error: /File["+filepath.Join(lib, "bad.rb")+"]/ensure: change from 'absent' to 'file' failed: ")
	ents, err := os.ReadDir(lib)
	require.NoError(t, err)
	for _, e := range ents {
		assert.False(t, strings.HasPrefix(e.Name(), "."), "no temp file left: %s", e.Name())
	}
}

func TestSyncWithAnotherDigest(t *testing.T) {
	f := newFixture(t)
	put(t, f.plugins, "a.rb", "a\n", 0o644)
	f.opts.Checksum = "md5"
	_, err := pluginsync.Sync(context.Background(), f.opts)
	require.NoError(t, err)
	assert.Contains(t, f.logged(), "/ensure: defined content as '{md5}"+source.SumString("md5", "a\n")+"'\n")
	for _, r := range f.fs.Requests() {
		if strings.HasPrefix(r, "/puppet/v3/file_metadatas/") {
			assert.Contains(t, r, "checksum_type=md5")
		}
	}
}

// TestSyncAMountTheServerCannotFind: Puppet Server's merging mounts
// (pluginfacts, plugins) answer a find of their root with 404 when no
// module of the environment has such a directory, while their search
// lists the root alone (Puppet's file_serving/mount/pluginfacts.rb). The
// agent takes the root from the search, as Puppet's recursion does: the
// sync succeeds, purging what the vardir had, and the plugins that do
// exist are still synced.
func TestSyncAMountTheServerCannotFind(t *testing.T) {
	f := newFixture(t)
	put(t, f.plugins, "puppet/type/x.rb", "x\n", 0o644)
	put(t, f.vardir, "facts.d/stale.txt", "stale=1\n", 0o644)
	f.handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/puppet/v3/file_metadata/pluginfacts") {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"message":"Not Found: Could not find file_metadata pluginfacts","issue_kind":"RESOURCE_NOT_FOUND"}`))
			return
		}
		f.fs.ServeHTTP(w, r)
	})
	require.NoError(t, os.RemoveAll(f.facts))
	require.NoError(t, os.MkdirAll(f.facts, 0o755)) // the search's root, nothing in it
	res, err := pluginsync.Sync(context.Background(), f.opts)
	require.NoError(t, err, f.logged())
	assert.NoFileExists(t, filepath.Join(f.vardir, "facts.d/stale.txt"))
	assert.DirExists(t, filepath.Join(f.vardir, "facts.d"))
	assert.FileExists(t, filepath.Join(f.vardir, "lib/puppet/type/x.rb"))
	assert.Contains(t, res.Removed, filepath.Join(f.vardir, "facts.d/stale.txt"))
}
