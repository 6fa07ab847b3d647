package pkg

import (
	"bytes"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/pippet/pippet/applier/sysfile"
)

// StatusFile is the dpkg database every provider reads.
var StatusFile = "/var/lib/dpkg/status"

// entry is one package instance of the dpkg database: the fields Puppet's
// dpkg-query format reads (${Status} ${Package} ${Version}) and those
// that virtual names and multiarch need.
type entry struct {
	Name, Arch, Version string
	// Want, Eflag and Status are the three words of the Status field
	// (install ok installed, hold ok installed, deinstall ok config-files).
	Want, Eflag, Status string
	// Provides is the raw Provides field.
	Provides string
	// ensureV and markV are ensure() and mark() made once, as the values
	// Get reports (boxed once, not per request).
	ensureV, markV any
}

// ensure is the entry's current ensure value as Puppet's dpkg provider
// derives it: purged for not-installed, absent for config-files and the
// half states, else the installed version.
func (e *entry) ensure() string {
	switch e.Status {
	case "not-installed", "":
		return "purged"
	case "config-files", "half-installed", "unpacked", "half-configured":
		return "absent"
	}
	return e.Version
}

// mark is hold when the package's selection is hold, else none.
func (e *entry) mark() string {
	if e.Want == "hold" {
		return "hold"
	}
	return "none"
}

// database is the parsed status file: instances by package name, each
// name's instances in file order. It is shared and never modified.
type database struct {
	byName map[string][]*entry
	// names are byName's keys in order, made on the first search.
	namesOnce sync.Once
	names     []string
}

// sortedNames returns the package names in order (shared: don't modify).
func (db *database) sortedNames() []string {
	db.namesOnce.Do(func() {
		db.names = make([]string, 0, len(db.byName))
		for n := range db.byName {
			db.names = append(db.names, n)
		}
		sort.Strings(db.names)
	})
	return db.names
}

// statusCache keeps the parsed database while the file's identity holds.
var statusCache sysfile.Cache[*database]

// loadDB returns the current database (one stat while it is unchanged).
func loadDB() (*database, error) { return statusCache.Load(StatusFile, parseStatus) }

// dropDB forgets the database after a change of ours.
func dropDB() { statusCache.Drop(StatusFile) }

// parseStatus reads the stanzas of a dpkg status file: "Field: value"
// lines, continuation lines starting with a blank, stanzas separated by
// blank lines.
func parseStatus(data []byte) (*database, error) {
	db := &database{byName: make(map[string][]*entry, 1024)}
	var cur entry
	have := false
	flush := func() {
		if have && cur.Name != "" {
			e := cur
			e.ensureV, e.markV = e.ensure(), e.mark()
			db.byName[e.Name] = append(db.byName[e.Name], &e)
		}
		cur, have = entry{}, false
	}
	for len(data) > 0 {
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		if len(bytes.TrimSpace(line)) == 0 {
			flush()
			continue
		}
		if line[0] == ' ' || line[0] == '\t' {
			continue // a continuation of a field we don't read
		}
		colon := bytes.IndexByte(line, ':')
		if colon < 0 {
			continue
		}
		have = true
		val := string(bytes.TrimSpace(line[colon+1:]))
		switch string(line[:colon]) {
		case "Package":
			cur.Name = val
		case "Version":
			cur.Version = val
		case "Architecture":
			cur.Arch = val
		case "Provides":
			cur.Provides = val
		case "Status":
			f := strings.Fields(val)
			if len(f) == 3 {
				cur.Want, cur.Eflag, cur.Status = f[0], f[1], f[2]
			}
		}
	}
	flush()
	return db, nil
}

// nativeArch is dpkg's name for the architecture the receiver runs on.
var nativeArch = map[string]string{"386": "i386", "arm": "armhf", "ppc64le": "ppc64el"}[runtime.GOARCH]

func init() {
	if nativeArch == "" {
		nativeArch = runtime.GOARCH
	}
}

// lookup finds name's instance: `name:arch` names one architecture;
// a plain name prefers the native or `all` instance, then the first.
func (db *database) lookup(name string) *entry {
	if list := db.byName[name]; len(list) > 0 {
		if len(list) == 1 {
			return list[0]
		}
		for _, e := range list {
			if e.Arch == nativeArch || e.Arch == "all" {
				return e
			}
		}
		return list[0]
	}
	if i := strings.LastIndexByte(name, ':'); i > 0 {
		for _, e := range db.byName[name[:i]] {
			if e.Arch == name[i+1:] {
				return e
			}
		}
	}
	return nil
}

// provider finds the first package, by name, whose Provides lists name
// unversioned: what Puppet's dpkg provider resolves a virtual name to
// when allow_virtual is true.
func (db *database) provider(name string) *entry {
	var found []*entry
	for _, list := range db.byName {
		for _, e := range list {
			if e.Provides == "" {
				continue
			}
			for _, p := range strings.Split(e.Provides, ",") {
				if strings.TrimSpace(p) == name {
					found = append(found, e)
					break
				}
			}
		}
	}
	if len(found) == 0 {
		return nil
	}
	sort.Slice(found, func(i, j int) bool {
		if found[i].Name != found[j].Name {
			return found[i].Name < found[j].Name
		}
		return found[i].Arch < found[j].Arch
	})
	return found[0]
}
