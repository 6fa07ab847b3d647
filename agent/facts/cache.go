package facts

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/goccy/go-json"

	"github.com/pippet/pippet/agent/facts/native"
	"github.com/pippet/pippet/applier/atomicfile"
	"github.com/pippet/pippet/protocol"
)

// Facter's fact cache, as Facter 4 keeps it: facter.conf's facts.ttls
// names fact groups (`facter --list-cache-groups`), custom facts and
// external fact files, each with a time to live ("1 hour", "30 days").
// A cached group is one JSON file in the cache directory, named after
// the group, holding its facts (Facter's own names: "os.name",
// "os.release", "hostname", ...) and "cache_format_version": 1; it holds
// while its modification time plus the ttl is in the future. Gather
// reads and writes the same files with the same rules, so that pippet
// and Facter share one cache:
//
//   - a cached custom fact (native or Ruby) whose file's facts are all
//     cached is not resolved: its file is not evaluated, its commands
//     not run; a file with an uncached fact is resolved whole and the
//     cached facts take their cached values, as in Facter, where the
//     other facts' code still runs;
//   - a cached external fact file is neither read nor run;
//   - a cached core fact takes its cached value;
//   - a cached value that is false or null counts as not cached (Facter
//     reads it so), a file that is not JSON is deleted and its facts
//     resolved again without a word (Facter's behaviour), as is a file
//     without cache_format_version 1 or without the fact asked for;
//   - an expired file is deleted, then written again with the values
//     resolved; a valid file holding every fact to write is left as it
//     is (its age counts from when it was first written).
//
// Unlike Facter, the cache directory and its files must be the running
// user's or root's and not writable by others: a symbolic link or a
// file owned by another user is refused (a warning, the facts are
// resolved), and files are written atomically (temp, fsync, rename,
// mode 0644, the directory 0755).

//go:embed facter_cache_groups.txt
var cacheGroupsText string

//go:embed facter_leaves.txt
var leavesText string

// A CacheWarning is about Facter's fact cache: a facter.conf that does
// not parse, a cache file or directory not used, not written, not
// deleted. The facts are resolved all the same: a warning (Facter's
// level for these), the run goes on. The cache's other errors (an
// unknown ttl unit) are Facter's errors.
type CacheWarning struct{ Err error }

func (w *CacheWarning) Error() string { return w.Err.Error() }
func (w *CacheWarning) Unwrap() error { return w.Err }

func cacheWarning(err error) error { return &CacheWarning{Err: err} }

// factGroup is one of Facter's fact groups: its facts (nil: an external
// fact file's group, which holds the file's facts).
type factGroup struct {
	name  string
	facts []string
}

// facterGroups are Facter 4.3's fact groups, as `facter
// --list-cache-groups` lists them (in order: a fact belongs to the first
// group whose list has it).
var facterGroups = parseGroups(cacheGroupsText)

// facterLeaves are the names of the core facts Facter 4.3 resolves on
// Linux (one per resolver: "os.name", "os.release", "hostname",
// "ipaddress_.*"): the keys of a core group's cache file.
var facterLeaves = strings.Fields(leavesText)

// leafPatterns are those of facterLeaves that are patterns, each
// matching a whole name.
var leafPatterns = func() []*regexp.Regexp {
	var res []*regexp.Regexp
	for _, leaf := range facterLeaves {
		if isPattern(leaf) {
			res = append(res, rubyRegexp("^(?:"+leaf+")$"))
		}
	}
	return res
}()

func parseGroups(text string) []factGroup {
	var gs []factGroup
	for _, line := range strings.Split(text, "\n") {
		if f, ok := strings.CutPrefix(line, "- "); ok && len(gs) > 0 {
			gs[len(gs)-1].facts = append(gs[len(gs)-1].facts, f)
		} else if line != "" {
			gs = append(gs, factGroup{name: line, facts: []string{}})
		}
	}
	return gs
}

// maxCacheFile bounds a cache file pippet reads.
const maxCacheFile = 64 << 20

// cachedFact is a fact's (or group's) entry of facts.ttls.
type cachedFact struct {
	ttl   int64 // seconds
	ok    bool  // the ttl could be read
	group string
}

// A factCache is the fact cache of one gathering.
type factCache struct {
	dir string
	// readable: the cache directory exists (Facter reads nothing
	// otherwise); usable: it is safe to read and write.
	readable, usable bool
	// dry: looking only, nothing deleted (FacterArgs).
	dry     bool
	groups  []factGroup
	entries []ttlEntry
	facts   map[string]cachedFact
	keys    []string // of facts, reverse sorted, with their patterns
	pats    map[string]*regexp.Regexp
	read    map[string]map[string]any
	custom  map[string]customCached
	skipped []string // custom facts of files not evaluated
	sorted  *sortedFiles
	writes  map[string]*orderedValues
	order   []string
	errs    []error
	now     time.Time
}

type customCached struct {
	v  any
	ok bool
}

type orderedValues struct {
	keys []string
	m    map[string]any
}

func (o *orderedValues) set(k string, v any) {
	if _, ok := o.m[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.m[k] = v
}

// openCache is the fact cache o's facter.conf describes (nil: none, no
// facts.ttls); extDirs are the external fact directories (their files
// are groups of their own). dry: nothing is deleted or written.
func openCache(o Options, extDirs []string, dry bool) (*factCache, []error) {
	if o.NoCache {
		return nil, nil
	}
	loc, ok := facterLocation(o)
	if !ok {
		return nil, nil
	}
	conf, err := readFacterConf(loc.Conf)
	if err != nil {
		return nil, []error{cacheWarning(err)}
	}
	if !conf.hasTTLs {
		return nil, nil
	}
	c := &factCache{dir: loc.CacheDir, dry: dry, facts: map[string]cachedFact{}, pats: map[string]*regexp.Regexp{},
		read: map[string]map[string]any{}, custom: map[string]customCached{}, writes: map[string]*orderedValues{}, now: time.Now()}
	var errs []error
	// Facter's groups, those of facter.conf (merged: a group of the same
	// name is replaced), then the external fact files, each a group.
	idx := map[string]int{}
	for _, g := range facterGroups {
		idx[g.name] = len(c.groups)
		c.groups = append(c.groups, g)
	}
	setGroup := func(g factGroup) {
		if i, ok := idx[g.name]; ok {
			c.groups[i] = g
			return
		}
		idx[g.name] = len(c.groups)
		c.groups = append(c.groups, g)
	}
	for _, name := range sortedKeys(anyMap(conf.groups)) {
		setGroup(factGroup{name: name, facts: append([]string{}, conf.groups[name]...)})
	}
	for _, d := range extDirs {
		ents, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range ents {
			setGroup(factGroup{name: e.Name()})
		}
	}
	// facts.ttls: the entries merged (a later one of the same name wins,
	// in the place of the first), each group's facts cached with the
	// longest ttl that names them.
	c.entries = conf.ttls
	merged := map[string]any{}
	var names []string
	for _, e := range conf.ttls {
		if _, seen := merged[e.name]; !seen {
			names = append(names, e.name)
		}
		merged[e.name] = e.raw
	}
	for _, name := range names {
		if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
			// It would name a file outside the cache directory.
			errs = append(errs, fmt.Errorf("Facter's cache (%s): %q cannot name a cache file; not cached", loc.Conf, name))
			continue
		}
		secs, err := ttlOf(name, merged[name])
		if err != nil {
			errs = append(errs, fmt.Errorf("Facter's cache (%s): %w", loc.Conf, err))
		}
		cf := cachedFact{ttl: secs, ok: err == nil, group: name}
		if i, isGroup := idx[name]; isGroup && c.groups[i].facts != nil {
			for _, f := range c.groups[i].facts {
				old, exists := c.facts[f]
				if !exists || (old.ok && cf.ok && old.ttl < cf.ttl) {
					c.facts[f] = cf
				}
			}
			continue
		}
		c.facts[name] = cf
	}
	for k := range c.facts {
		c.keys = append(c.keys, k)
		c.pats[k] = rubyRegexp("^" + k + `\..*`)
	}
	sort.Sort(sort.Reverse(sort.StringSlice(c.keys)))
	if fi, err := os.Stat(c.dir); err == nil && fi.IsDir() {
		c.readable = true
	}
	c.usable = true
	if err := checkCacheDir(c.dir); err != nil {
		c.usable = false
		errs = append(errs, cacheWarning(err))
	}
	return c, errs
}

func anyMap(m map[string][]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// peekCache is the fact cache of Gather with o, to look at only.
func peekCache(o Options) *factCache {
	dirs := o.ExternalDirs
	if dirs == nil {
		dirs = DefaultExternalDirs
	}
	c, _ := openCache(o, dirs, true)
	return c
}

// ttlOf reads one facts.ttls value.
func ttlOf(name string, raw any) (int64, error) {
	s, ok := raw.(string)
	if !ok {
		// Facter 4.3 stops on it (NoMethodError: undefined method `split').
		return 0, fmt.Errorf("the ttl of %q is %v, not a duration in quotes such as \"1 hour\"", name, raw)
	}
	return TTLSeconds(s)
}

// rubyRegexp compiles a Ruby pattern Facter builds from names; a name
// that is not a valid pattern matches itself.
func rubyRegexp(p string) *regexp.Regexp {
	re, err := regexp.Compile(p)
	if err != nil {
		re = regexp.MustCompile(regexp.QuoteMeta(p))
	}
	return re
}

// checkCacheDir refuses a cache directory (or its nearest existing
// ancestor, when it is still to be made) that is a symbolic link, not a
// directory, or that another user than root and the running one owns or
// may write to.
func checkCacheDir(dir string) error {
	d := dir
	for {
		fi, err := os.Lstat(d)
		if errors.Is(err, os.ErrNotExist) && filepath.Dir(d) != d {
			d = filepath.Dir(d)
			continue
		}
		if err != nil {
			return fmt.Errorf("fact cache %s: %w; not used", dir, err)
		}
		if d != dir && fi.IsDir() {
			// An ancestor: /var/cache is root's; anything else is checked
			// when the directory is made.
			return nil
		}
		st, _ := fi.Sys().(*syscall.Stat_t)
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			return fmt.Errorf("fact cache %s: a symbolic link; not used", dir)
		case !fi.IsDir():
			return fmt.Errorf("fact cache %s: not a directory; not used", dir)
		case st != nil && st.Uid != 0 && int(st.Uid) != os.Geteuid():
			return fmt.Errorf("fact cache %s: owned by uid %d, not root or this user; not used", dir, st.Uid)
		case fi.Mode().Perm()&0o022 != 0 && fi.Mode()&os.ModeSticky == 0:
			return fmt.Errorf("fact cache %s: writable by others (mode %04o); not used", dir, fi.Mode().Perm())
		}
		return nil
	}
}

// getFact is Facter's FactGroups#get_fact: name's entry, or that of a
// cached fact name is part of ("os.name" of "os").
func (c *factCache) getFact(name string) (cachedFact, bool) {
	if f, ok := c.facts[name]; ok {
		return f, true
	}
	for _, k := range c.keys {
		if c.pats[k].MatchString(name) {
			return c.facts[k], true
		}
	}
	return cachedFact{}, false
}

// enabled says whether name is cached, and in which group.
func (c *factCache) enabled(name string) (cachedFact, bool) {
	f, ok := c.getFact(name)
	return f, ok && f.ok
}

// groupTTL is the ttl of the first facts.ttls entry that names group.
func (c *factCache) groupTTL(group string) (int64, bool) {
	for _, e := range c.entries {
		if e.name == group {
			secs, err := ttlOf(e.name, e.raw)
			return secs, err == nil
		}
	}
	return 0, false
}

func (c *factCache) path(group string) string { return filepath.Join(c.dir, group) }

// expire deletes group's file when it is older than ttl, and says
// whether it was.
func (c *factCache) expire(group string, ttl int64) bool {
	fi, err := os.Lstat(c.path(group))
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	if fi.ModTime().Add(time.Duration(ttl) * time.Second).After(c.now) {
		return false
	}
	c.remove(group)
	return true
}

func (c *factCache) remove(group string) {
	if c.dry || !c.usable {
		return
	}
	// What was read stays read (Facter's memo), the file goes.
	if err := os.Remove(c.path(group)); err != nil && !errors.Is(err, os.ErrNotExist) {
		c.errs = append(c.errs, cacheWarning(fmt.Errorf("Could not delete cache: %w", err)))
	}
}

// readFile reads a cache file that is a regular file of root or of the
// running user, not through a symbolic link; exists is false when there
// is none.
func readCacheFile(p string) (b []byte, exists bool, err error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, false, nil
		}
		if errors.Is(err, syscall.ELOOP) {
			return nil, true, fmt.Errorf("fact cache %s: a symbolic link, not followed", p)
		}
		return nil, true, fmt.Errorf("fact cache: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, true, fmt.Errorf("fact cache: %w", err)
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.Mode().IsRegular():
		return nil, true, fmt.Errorf("fact cache %s: not a regular file, not read", p)
	case st != nil && st.Uid != 0 && int(st.Uid) != os.Geteuid():
		return nil, true, fmt.Errorf("fact cache %s: owned by uid %d, not root or this user; not read", p, st.Uid)
	}
	b, err = io.ReadAll(io.LimitReader(f, maxCacheFile+1))
	if err == nil && len(b) > maxCacheFile {
		err = fmt.Errorf("fact cache %s: larger than %d bytes, not read", p, maxCacheFile)
	}
	return b, true, err
}

// parseCacheFile reads a cache file's JSON object.
func parseCacheFile(b []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, errors.New("not an object")
	}
	return protocol.Numbers(m).(map[string]any), nil
}

// readGroup is group's cached data; nil when there is none, and when the
// file is not JSON (it is deleted, as Facter does).
func (c *factCache) readGroup(group string) map[string]any {
	if d, ok := c.read[group]; ok {
		return d
	}
	b, exists, err := readCacheFile(c.path(group))
	var data map[string]any
	switch {
	case err != nil:
		c.errs = append(c.errs, cacheWarning(err))
	case exists:
		if data, err = parseCacheFile(b); err != nil {
			c.remove(group)
			data = nil
		}
	}
	c.read[group] = data
	return data
}

// resolve is Facter's CacheManager#resolve_fact for one fact it looks
// for: name, or the external fact file file (its facts). The values
// come from the cache; ok is false when the fact is to be resolved.
func (c *factCache) resolve(name, file string) (map[string]any, bool) {
	if !c.readable || !c.usable {
		return nil, false
	}
	factName := name
	if file != "" {
		factName = filepath.Base(file)
	}
	f, ok := c.enabled(factName)
	if !ok {
		return nil, false
	}
	if file != "" && f.group != factName {
		c.errs = append(c.errs, fmt.Errorf("Cannot cache '%s' fact from '%s' group. Caching custom group is not supported for external facts.", factName, f.group))
		return nil, false
	}
	if c.expire(f.group, f.ttl) {
		delete(c.read, f.group)
		if c.dry {
			return nil, false
		}
	}
	data := c.readGroup(f.group)
	if data == nil {
		return nil, false
	}
	if file != "" {
		out := map[string]any{}
		for k, v := range data {
			if k != "cache_format_version" {
				out[k] = v
			}
		}
		return out, true
	}
	if v := data["cache_format_version"]; v != int64(1) && v != float64(1) {
		c.remove(f.group)
		return nil, false
	}
	re := rubyRegexp(name)
	found := false
	for k := range data {
		if re.MatchString(k) {
			found = true
			break
		}
	}
	if !found {
		c.remove(f.group)
	}
	v := data[name]
	if v == nil || v == false {
		return nil, false
	}
	return map[string]any{name: v}, true
}

// record notes a resolved fact (of the external fact file file, when
// not "") for the cache, when its group is cached.
func (c *factCache) record(name, file string, v any) {
	factName := name
	if file != "" {
		factName = filepath.Base(file)
	}
	// Facter's get_fact_group, then fact_cache_enabled?: a cached fact's
	// group is its entry's.
	f, ok := c.enabled(factName)
	if !ok {
		return
	}
	group := f.group
	w := c.writes[group]
	if w == nil {
		w = &orderedValues{m: map[string]any{}}
		c.writes[group] = w
		c.order = append(c.order, group)
	}
	w.set(name, v)
}

// flush writes the groups recorded whose file is missing, expired or
// lacks one of their facts.
func (c *factCache) flush(ctx context.Context) []error {
	if c.dry || len(c.order) == 0 {
		return nil
	}
	if !c.usable {
		return nil
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return []error{cacheWarning(fmt.Errorf("Could not write cache: %w", err))}
	}
	if err := checkCacheDir(c.dir); err != nil {
		return []error{cacheWarning(err)}
	}
	var errs []error
	for _, group := range c.order {
		ttl, ok := c.groupTTL(group)
		if !ok {
			continue
		}
		c.expire(group, ttl)
		w := c.writes[group]
		if c.alreadyCached(group, w) {
			continue
		}
		b, err := encodeCacheFile(w)
		if err != nil {
			errs = append(errs, cacheWarning(fmt.Errorf("fact cache %s: %w", group, err)))
			continue
		}
		if err := atomicfile.Write(ctx, c.path(group), b, atomicfile.Options{Mode: 0o644, UID: -1, GID: -1}); err != nil {
			errs = append(errs, cacheWarning(fmt.Errorf("Could not write cache: %w", err)))
		}
	}
	return errs
}

// alreadyCached: group's file is there and holds every fact of w.
func (c *factCache) alreadyCached(group string, w *orderedValues) bool {
	b, exists, err := readCacheFile(c.path(group))
	if err != nil || !exists {
		return false
	}
	data, err := parseCacheFile(b)
	if err != nil {
		return false
	}
	for _, k := range w.keys {
		if _, ok := data[k]; !ok {
			return false
		}
	}
	return true
}

// encodeCacheFile is Ruby's JSON.pretty_generate of w and
// "cache_format_version": 1, byte for byte.
func encodeCacheFile(w *orderedValues) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString("{\n")
	for i, k := range w.keys {
		if i > 0 {
			buf.WriteString(",\n")
		}
		buf.WriteString("  ")
		if err := rubyPretty(&buf, k, ""); err != nil {
			return nil, err
		}
		buf.WriteString(": ")
		if err := rubyPretty(&buf, w.m[k], "  "); err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
	}
	if len(w.keys) > 0 {
		buf.WriteString(",\n")
	}
	buf.WriteString("  \"cache_format_version\": 1\n}")
	return buf.Bytes(), nil
}

// rubyPretty writes v as Ruby's JSON.pretty_generate does at indent:
// two spaces a level, an empty array "[\n\n]" and an empty object
// "{\n}" (Ruby's json 2.6), whole floats with their ".0", no HTML
// escapes.
func rubyPretty(buf *bytes.Buffer, v any, indent string) error {
	switch x := v.(type) {
	case map[string]any:
		buf.WriteString("{\n")
		for i, k := range sortedKeys(x) {
			if i > 0 {
				buf.WriteString(",\n")
			}
			buf.WriteString(indent + "  ")
			if err := rubyPretty(buf, k, ""); err != nil {
				return err
			}
			buf.WriteString(": ")
			if err := rubyPretty(buf, x[k], indent+"  "); err != nil {
				return err
			}
		}
		if len(x) > 0 {
			buf.WriteByte('\n')
		}
		buf.WriteString(indent + "}")
		return nil
	case []any:
		buf.WriteString("[\n")
		for i, e := range x {
			if i > 0 {
				buf.WriteString(",\n")
			}
			buf.WriteString(indent + "  ")
			if err := rubyPretty(buf, e, indent+"  "); err != nil {
				return err
			}
		}
		buf.WriteString("\n" + indent + "]")
		return nil
	}
	var vb bytes.Buffer
	enc := json.NewEncoder(&vb)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rubyFloats(v)); err != nil {
		return err
	}
	buf.Write(bytes.TrimRight(vb.Bytes(), "\n"))
	return nil
}

// rubyFloats is v with its whole floats written as Ruby writes them
// (1024.0, not 1024), so that Facter reads a Float back.
func rubyFloats(v any) any {
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return json.Number(strconv.FormatFloat(x, 'f', 1, 64))
		}
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = rubyFloats(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = rubyFloats(e)
		}
		return out
	}
	return v
}

// isPattern: a leaf name that is a pattern ("ipaddress_.*").
func isPattern(leaf string) bool { return strings.ContainsAny(leaf, "*[") }

// setLeaf sets f's value at a dotted path whose parents exist.
func setLeaf(f Facts, leaf string, v any) {
	parts := strings.Split(leaf, ".")
	m := map[string]any(f)
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			return
		}
		m = next
	}
	m[parts[len(parts)-1]] = v
}

// core gives the cached core facts of f their cached values.
func (c *factCache) core(f Facts) {
	for _, leaf := range facterLeaves {
		if isPattern(leaf) {
			continue
		}
		if _, ok := f.Get(leaf); !ok {
			continue
		}
		if vals, ok := c.resolve(leaf, ""); ok {
			setLeaf(f, leaf, vals[leaf])
		}
	}
}

// recordCore notes the core facts of f (but those an external fact of
// ext replaced) for the cache.
func (c *factCache) recordCore(f, ext Facts) {
	named := map[string]bool{}
	for _, leaf := range facterLeaves {
		if isPattern(leaf) {
			continue
		}
		named[leaf] = true
		top, _, _ := strings.Cut(leaf, ".")
		if _, isExt := ext[top]; isExt {
			continue
		}
		if v, ok := f.Get(leaf); ok {
			c.record(leaf, "", v)
		}
	}
	for _, re := range leafPatterns {
		for _, k := range sortedKeys(f) {
			if _, isExt := ext[k]; !named[k] && !isExt && re.MatchString(k) {
				c.record(k, "", f[k])
			}
		}
	}
}

// externalHook is the cache's part in reading external fact files: a
// cached file is not read, its facts come from the cache; a file read is
// noted for the cache; a second cached file of the same name is left
// out, as Facter leaves it.
func (c *factCache) externalHook() *extHook {
	seen := map[string]bool{}
	return &extHook{
		cached: func(p string) (Facts, bool) {
			base := filepath.Base(p)
			if seen[base] {
				if _, ok := c.enabled(base); ok {
					c.errs = append(c.errs, fmt.Errorf("Caching is enabled for group \"%s\" while there are at least two external facts files with the same filename", base))
					return Facts{}, true
				}
			}
			seen[base] = true
			vals, ok := c.resolve(base, p)
			return vals, ok
		},
		loaded: func(p string, f Facts) {
			for _, k := range sortedKeys(f) {
				c.record(k, p, f[k])
			}
		},
	}
}

// customValue is name's cached value (memoised: the cache is read once
// per fact).
func (c *factCache) customValue(name string) (any, bool) {
	if cc, ok := c.custom[name]; ok {
		return cc.v, cc.ok
	}
	vals, ok := c.resolve(name, "")
	cc := customCached{ok: ok}
	if ok {
		cc.v = vals[name]
	}
	c.custom[name] = cc
	return cc.v, cc.ok
}

// factAddRE finds the facts a Ruby fact file adds; factAddAny counts
// its Facter.add calls.
var (
	factAddRE  = regexp.MustCompile(`Facter\.add\(?\s*(?::([A-Za-z_][A-Za-z0-9_]*)|'([^'\\]*)'|"([^"\\#]*)")`)
	factAddAny = regexp.MustCompile(`Facter\.add\b`)
)

// rubyFactNames are the facts a Ruby fact file adds, when every
// Facter.add in it names its fact literally; nil otherwise.
func rubyFactNames(b []byte) []string {
	all := factAddAny.FindAllIndex(b, -1)
	ms := factAddRE.FindAllSubmatch(b, -1)
	if len(all) == 0 || len(ms) != len(all) {
		return nil
	}
	var names []string
	for _, m := range ms {
		names = append(names, strings.ToLower(string(bytes.Join(m[1:], nil))))
	}
	return names
}

// uncached leaves out of files the custom fact files whose facts are
// all cached (with a value); skipped says whether any was.
// The answer is memoised: Gather asks before gatherCustom does.
func (c *factCache) uncached(files []string, noNative bool, nopts native.Options) (kept []string, skipped bool) {
	if c == nil || !c.readable || !c.usable {
		return files, false
	}
	if c.sorted != nil {
		return c.sorted.kept, c.sorted.skipped
	}
	defer func() { c.sorted = &sortedFiles{kept: kept, skipped: skipped} }()
	known := map[string]*native.File{}
	if !noNative {
		known, _ = native.Recognise(files, nopts)
	}
	for _, p := range files {
		var names []string
		if f := known[p]; f != nil {
			names = f.Facts
		} else if b, err := os.ReadFile(p); err == nil {
			names = rubyFactNames(b)
		}
		all := len(names) > 0
		for _, n := range names {
			if _, ok := c.customValue(n); !ok {
				all = false
			}
		}
		if !all {
			kept = append(kept, p)
			continue
		}
		skipped = true
		c.skipped = append(c.skipped, names...)
	}
	return kept, skipped
}

// sortedFiles is uncached's answer.
type sortedFiles struct {
	kept    []string
	skipped bool
}

// withSkipped is core and the cached values of the custom facts of the
// files not evaluated, which the facts resolved natively see (systemd's
// asks for stdlib's service_provider), as Facter's Facter.value reads
// them from the cache.
func (c *factCache) withSkipped(o Options, core Facts) Facts {
	files := customFiles(o.CustomDirs)
	if len(files) == 0 {
		return core
	}
	c.uncached(files, o.NoNative, native.Options{DefaultProvider: o.DefaultProvider, Puppet: o.Puppet})
	if len(c.skipped) == 0 {
		return core
	}
	out := make(Facts, len(core)+len(c.skipped))
	for k, v := range core {
		out[k] = v
	}
	for _, n := range c.skipped {
		if v, ok := c.customValue(n); ok {
			out[n] = v
		}
	}
	return out
}

// customFacts gives the cached custom facts their cached values (those
// of files not evaluated among them), and notes the custom facts for
// the cache.
func (c *factCache) customFacts(custom Facts, weights map[string]int64) (Facts, map[string]int64) {
	if custom == nil {
		custom, weights = Facts{}, map[string]int64{}
	}
	names := append(sortedKeys(custom), c.skipped...)
	for _, n := range names {
		if v, ok := c.customValue(n); ok {
			custom[n] = v
			if _, has := weights[n]; !has {
				weights[n] = 0
			}
		}
	}
	for _, n := range sortedKeys(custom) {
		c.record(n, "", custom[n])
	}
	return custom, weights
}

func sortedKeys[M ~map[string]V, V any](m M) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
