package facts

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadHOCONAsFacter: facter.conf files as sites write them read as
// Facter's HOCON library (Ruby's hocon gem) reads them.
func TestReadHOCONAsFacter(t *testing.T) {
	if exec.Command("ruby", "-e", "require 'hocon'").Run() != nil {
		t.Skip("Ruby's hocon (Facter's) is not installed")
	}
	confs := map[string]string{
		"facter.conf's example": `# comment
facts : {
    blocklist : [ "file system", "EC2" ],
    ttls : [
        { "timezone" : 30 days },
        { apt_updates: "1 hour" }
    ]
}
global : {
    external-dir : [ "/etc/facts" ],
    custom-dir   : [ "/etc/custom" ]
}
cli : { debug : false, trace : true, log-level : "warn" }
`,
		"root braces, equals, commas": `{ "facts" = { "ttls" = [ { "operating system" = "3600 seconds" }, { "x.txt" : 2 h, } ], } }`,
		"dotted key":                  "facts.ttls = [\n  { kernel : 1 day }\n]\n// comment\nfacts.blocklist = [ legacy ]\n",
		"newlines as separators": `facts {
  ttls = [
    { memory : 10 minutes }
    { "load_average" : "1 minute" }
  ]
}
`,
		"numbers and booleans": "facts : { ttls : [ { a : 10 }, { b : \"10\" } ] }\nglobal : { show-legacy : true }\n",
	}
	for name, conf := range confs {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "facter.conf")
			require.NoError(t, os.WriteFile(p, []byte(conf), 0o644))
			out, err := exec.Command("ruby", "-rhocon", "-rjson", "-e", "puts JSON.generate(Hocon.load(ARGV[0]))", p).Output()
			require.NoError(t, err)
			var want any
			require.NoError(t, json.Unmarshal(out, &want))
			m, err := readHOCON([]byte(conf))
			require.NoError(t, err)
			b, err := json.Marshal(numbersAsJSON(m))
			require.NoError(t, err)
			var got any
			require.NoError(t, json.Unmarshal(b, &got))
			assert.Equal(t, want, got)
		})
	}
	_, err := readHOCON([]byte(`facts : { ttls : [ { "x" : 1 hour `))
	assert.Error(t, err, "unclosed")
}

// numbersAsJSON turns hoconNumbers into JSON numbers.
func numbersAsJSON(v any) any {
	switch x := v.(type) {
	case hoconNumber:
		return json.Number(x)
	case map[string]any:
		for k, e := range x {
			x[k] = numbersAsJSON(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbersAsJSON(e)
		}
	}
	return v
}

// TestFacterLocation: Debian's facter.conf first, else the all-in-one
// agent's, each with its Facter's cache directory; none: no cache.
func TestFacterLocation(t *testing.T) {
	saved := FacterLocations
	t.Cleanup(func() { FacterLocations = saved })
	debian, aio := filepath.Join(t.TempDir(), "facter.conf"), filepath.Join(t.TempDir(), "facter.conf")
	FacterLocations = []FacterLocation{{Conf: debian, CacheDir: "/debian/cache"}, {Conf: aio, CacheDir: "/aio/cache"}}
	_, ok := facterLocation(Options{})
	assert.False(t, ok, "no facter.conf")
	require.NoError(t, os.WriteFile(aio, nil, 0o644))
	l, ok := facterLocation(Options{})
	assert.True(t, ok)
	assert.Equal(t, FacterLocation{Conf: aio, CacheDir: "/aio/cache"}, l)
	require.NoError(t, os.WriteFile(debian, nil, 0o644))
	l, _ = facterLocation(Options{})
	assert.Equal(t, FacterLocation{Conf: debian, CacheDir: "/debian/cache"}, l)
	l, _ = facterLocation(Options{CacheDir: "/mine"})
	assert.Equal(t, "/mine", l.CacheDir)
	_, ok = facterLocation(Options{FacterConf: "-"})
	assert.False(t, ok)
	assert.Equal(t, "/etc/facter/facter.conf", saved[0].Conf)
	assert.Equal(t, "/var/cache/facter/facts", saved[0].CacheDir)
}

// TestFacterLocationRoot: another system's files (Options.Root) use no
// cache of this machine's, unless told which.
func TestFacterLocationRoot(t *testing.T) {
	saved := FacterLocations
	t.Cleanup(func() { FacterLocations = saved })
	conf := filepath.Join(t.TempDir(), "facter.conf")
	require.NoError(t, os.WriteFile(conf, nil, 0o644))
	FacterLocations = []FacterLocation{{Conf: conf, CacheDir: "/cache"}}
	_, ok := facterLocation(Options{Root: t.TempDir()})
	assert.False(t, ok)
	_, ok = facterLocation(Options{Root: "/"})
	assert.True(t, ok)
	_, ok = facterLocation(Options{Root: t.TempDir(), FacterConf: conf})
	assert.True(t, ok)
}

// TestEncodeCacheFileAsRuby: a cache file is written as Ruby's
// JSON.pretty_generate writes it (whole floats with their ".0", no HTML
// escapes), so that Facter reads back the same kinds.
func TestEncodeCacheFileAsRuby(t *testing.T) {
	w := &orderedValues{m: map[string]any{}}
	w.set("b", map[string]any{"f": 1024.0, "g": 1.5, "i": int64(3), "l": []any{true, nil, "<&>"}, "e": map[string]any{}, "a": []any{}})
	w.set("a", "x")
	got, err := encodeCacheFile(w)
	require.NoError(t, err)
	if exec.Command("ruby", "-e", "require 'json'").Run() != nil {
		t.Skip("no Ruby to compare with")
	}
	out, err := exec.Command("ruby", "-rjson", "-e", `puts JSON.pretty_generate({"b" => {"a" => [], "e" => {}, "f" => 1024.0, "g" => 1.5, "i" => 3, "l" => [true, nil, "<&>"]}, "a" => "x", "cache_format_version" => 1})`).Output()
	require.NoError(t, err)
	assert.Equal(t, strings.TrimSuffix(string(out), "\n"), string(got))
}
