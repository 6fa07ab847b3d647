// Package accounts reads the local account databases (/etc/passwd,
// /etc/shadow, /etc/group) for the user and group types, and runs the
// shadow tools (useradd, usermod, groupadd, chage, chpasswd...) that change
// them.
//
// The databases are parsed directly, not through getent or NSS: each file
// is read once and kept in a sysfile.Cache while its identity (device,
// inode, size, modification and change times) holds, so an unchanged user
// or group costs one stat of the file it needs, and an edit by any other
// program is seen at once. Every command run through Run drops the cached
// databases, whether it succeeded or not (a failing tool may still have
// changed something).
//
// Lines the C library would skip are skipped too: comments, blank lines,
// NIS compat entries (+name, -name) and lines whose numeric fields do not
// parse. /etc/gshadow is not read: neither type manages a group password
// or group administrators, and group membership is read from /etc/group,
// which the shadow tools keep in step with it.
package accounts

import (
	"bytes"
	"context"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/command"
	"github.com/pippet/pippet/applier/sysfile"
)

// The databases read. Variables so that a test of the parser alone may
// point them elsewhere; the types' tests use the real files.
var (
	PasswdFile = "/etc/passwd"
	ShadowFile = "/etc/shadow"
	GroupFile  = "/etc/group"
)

// User is one /etc/passwd entry.
type User struct {
	Name        string
	UID, GID    int64
	Gecos       string
	Home, Shell string

	// boxed holds uid, gid, home, shell and gecos as interface values,
	// made once when the file is parsed, so reporting them allocates nothing.
	boxed [5]any
}

// Boxed returns the entry's uid and gid (int64), home, shell and gecos
// (string) as interface values made once per parse: a provider reporting
// them for every request allocates nothing. Don't modify them.
func (u *User) Boxed() (uid, gid, home, shell, gecos any) {
	return u.boxed[0], u.boxed[1], u.boxed[2], u.boxed[3], u.boxed[4]
}

// Users is a parsed /etc/passwd. Immutable once loaded.
type Users struct {
	byName map[string]*User
	list   []*User
}

// All returns the entries in file order, each name once (the first entry
// of a name, as Lookup finds it). The slice is shared: don't modify it.
func (u *Users) All() []*User {
	if u == nil {
		return nil
	}
	return u.list
}

// Lookup returns the entry called name (the first one, as getpwnam does), or nil.
func (u *Users) Lookup(name string) *User {
	if u == nil {
		return nil
	}
	return u.byName[name]
}

// Shadow is one /etc/shadow entry; a number field left empty is -1.
type Shadow struct {
	Name     string
	Password string
	// LastChange, Min, Max, Warn, Inactive and Expire are days (since the
	// epoch for LastChange and Expire); -1 when the field is empty.
	LastChange, Min, Max, Warn, Inactive, Expire int64

	// boxed holds Password, Min, Max and Warn as interface values made
	// once per parse (see Boxed).
	boxed [4]any
}

// Boxed returns the password and the minimum, maximum and warning ages as
// interface values made once per parse, so reporting them for every
// request (or every account of a listing) allocates nothing. Don't modify
// them.
func (s *Shadow) Boxed() (password, min, max, warn any) {
	return s.boxed[0], s.boxed[1], s.boxed[2], s.boxed[3]
}

// Shadows is a parsed /etc/shadow.
type Shadows struct {
	byName map[string]*Shadow
}

// Lookup returns name's entry, or nil.
func (s *Shadows) Lookup(name string) *Shadow {
	if s == nil {
		return nil
	}
	return s.byName[name]
}

// Group is one /etc/group entry.
type Group struct {
	Name    string
	GID     int64
	Members []string

	gid any // GID boxed once per parse
}

// BoxedGID returns GID as an interface value made once per parse.
func (g *Group) BoxedGID() any { return g.gid }

// Groups is a parsed /etc/group.
type Groups struct {
	list     []*Group
	byName   map[string]*Group
	byGID    map[int64]*Group
	memberOf map[string][]string // user → groups listing it, in file order
}

// All returns the groups in file order, each name once (the first entry
// of a name). The slice is shared: don't modify it.
func (g *Groups) All() []*Group {
	if g == nil {
		return nil
	}
	return g.list
}

// Lookup returns the group called name (the first one), or nil.
func (g *Groups) Lookup(name string) *Group {
	if g == nil {
		return nil
	}
	return g.byName[name]
}

// MemberOf returns the names of the groups whose member list names user,
// in file order, each once: the user's supplementary groups as Puppet's
// groups_of reads them (a primary group counts only when it lists the
// user). The slice is shared: don't modify it.
func (g *Groups) MemberOf(user string) []string {
	if g == nil {
		return nil
	}
	return g.memberOf[user]
}

var (
	passwdCache sysfile.Cache[*Users]
	shadowCache sysfile.Cache[*Shadows]
	groupCache  sysfile.Cache[*Groups]
)

// LoadUsers returns /etc/passwd parsed; a missing file is an empty database.
func LoadUsers() (*Users, error) {
	u, err := passwdCache.Load(PasswdFile, ParseUsers)
	if sysfile.IsNotExist(err) {
		return &Users{}, nil
	}
	return u, err
}

// LoadShadows returns /etc/shadow parsed; a missing file is an empty database.
func LoadShadows() (*Shadows, error) {
	s, err := shadowCache.Load(ShadowFile, ParseShadows)
	if sysfile.IsNotExist(err) {
		return &Shadows{}, nil
	}
	return s, err
}

// LoadGroups returns /etc/group parsed; a missing file is an empty database.
func LoadGroups() (*Groups, error) {
	g, err := groupCache.Load(GroupFile, ParseGroups)
	if sysfile.IsNotExist(err) {
		return &Groups{}, nil
	}
	return g, err
}

// Drop forgets every parsed database: call it after running a tool that
// may have changed them (Run does).
func Drop() {
	passwdCache.DropAll()
	shadowCache.DropAll()
	groupCache.DropAll()
}

// fields splits data into its entry lines' colon-separated fields, skipping
// what getpwent(3) skips: blank lines, comments and NIS compat entries.
func fields(data []byte, n int, each func(f []string)) {
	f := make([]string, 0, n)
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if len(line) == 0 || line[0] == '#' || line[0] == '+' || line[0] == '-' {
			continue
		}
		s := string(line)
		f = f[:0]
		for len(f) < n-1 {
			i := strings.IndexByte(s, ':')
			if i < 0 {
				break
			}
			f = append(f, s[:i])
			s = s[i+1:]
		}
		f = append(f, s)
		if len(f) < n {
			continue
		}
		each(f)
	}
}

// id parses a uid or gid field: decimal, 0 to 2^32-1.
func id(s string) (int64, bool) {
	v, err := strconv.ParseUint(s, 10, 32)
	return int64(v), err == nil
}

// days parses a shadow number field: empty is -1.
func days(s string) (int64, bool) {
	if s == "" {
		return -1, true
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}

// ParseUsers parses /etc/passwd's content.
func ParseUsers(data []byte) (*Users, error) {
	u := &Users{byName: map[string]*User{}}
	fields(data, 7, func(f []string) {
		uid, ok1 := id(f[2])
		gid, ok2 := id(f[3])
		if !ok1 || !ok2 || f[0] == "" {
			return
		}
		if _, dup := u.byName[f[0]]; dup {
			return
		}
		e := &User{Name: f[0], UID: uid, GID: gid, Gecos: f[4], Home: f[5], Shell: f[6]}
		e.boxed = [5]any{e.UID, e.GID, e.Home, e.Shell, e.Gecos}
		u.byName[f[0]] = e
		u.list = append(u.list, e)
	})
	return u, nil
}

// ParseShadows parses /etc/shadow's content.
func ParseShadows(data []byte) (*Shadows, error) {
	s := &Shadows{byName: map[string]*Shadow{}}
	fields(data, 9, func(f []string) {
		if f[0] == "" {
			return
		}
		var n [6]int64
		for i := range n {
			v, ok := days(f[2+i])
			if !ok {
				return
			}
			n[i] = v
		}
		if _, dup := s.byName[f[0]]; dup {
			return
		}
		e := &Shadow{Name: f[0], Password: f[1], LastChange: n[0], Min: n[1], Max: n[2], Warn: n[3], Inactive: n[4], Expire: n[5]}
		e.boxed = [4]any{e.Password, e.Min, e.Max, e.Warn}
		s.byName[f[0]] = e
	})
	return s, nil
}

// ParseGroups parses /etc/group's content.
func ParseGroups(data []byte) (*Groups, error) {
	g := &Groups{byName: map[string]*Group{}, byGID: map[int64]*Group{}, memberOf: map[string][]string{}}
	fields(data, 4, func(f []string) {
		gid, ok := id(f[2])
		if !ok || f[0] == "" {
			return
		}
		var members []string
		if f[3] != "" {
			members = strings.Split(f[3], ",")
		}
		gr := &Group{Name: f[0], GID: gid, Members: members, gid: gid}
		if _, dup := g.byName[gr.Name]; !dup {
			g.byName[gr.Name] = gr
			g.list = append(g.list, gr)
		}
		if _, dup := g.byGID[gid]; !dup {
			g.byGID[gid] = gr
		}
		for _, m := range members {
			m = strings.TrimSpace(m)
			if m == "" {
				continue
			}
			l := g.memberOf[m]
			if len(l) == 0 || !contains(l, gr.Name) {
				g.memberOf[m] = append(l, gr.Name)
			}
		}
	})
	return g, nil
}

func contains(l []string, s string) bool {
	for _, e := range l {
		if e == s {
			return true
		}
	}
	return false
}

// Tool returns the absolute path of a shadow tool (useradd...) as found on
// PATH, so failure messages name the command as Puppet does
// (/usr/sbin/useradd); the bare name when it is not found (the run then
// fails saying so).
func Tool(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	return name
}

// Run runs argv (argv[0] a tool name, resolved by Tool) feeding it stdin
// (nil: none) and drops the cached databases afterwards. A non-zero exit
// is a *command.ExitError naming the command and its last output lines.
func Run(ctx context.Context, stdin []byte, argv ...string) (string, error) {
	argv[0] = Tool(argv[0])
	defer Drop()
	// The tools run to their end whatever becomes of the receiver: a
	// useradd cut short may leave passwd and shadow out of step
	// (command.Cmd.Finish).
	return command.Check(ctx, &command.Cmd{Argv: argv, Stdin: stdin, Env: toolEnv, Finish: true})
}

// toolEnv is the environment the tools run in: a fixed PATH and the C
// locale, so their messages are the ones Puppet's logs show whatever the
// receiver's own environment.
var toolEnv = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C", "LC_ALL=C"}

// NameArgs renders a name for the end of a tool's command line: a name that
// starts with '-' would be read as an option, so it follows "--".
func NameArgs(name string) []string {
	if strings.HasPrefix(name, "-") {
		return []string{"--", name}
	}
	return []string{name}
}

// ToolsFound is a Confine.Func: "" when every named tool is on PATH.
// The engine checks a provider's commands on every request; looking three
// tools up in every PATH directory costs more than the whole of an
// unchanged account, so a positive verdict is kept (a tool removed later
// makes the change that needs it fail, naming it) and a negative one is
// checked again on the next request, so a tool installed meanwhile is
// found.
func ToolsFound(names ...string) func(*applier.Env) string {
	var found atomic.Bool
	return func(*applier.Env) string {
		if found.Load() {
			return ""
		}
		for _, n := range names {
			if _, err := exec.LookPath(n); err != nil {
				return "command '" + n + "' not found"
			}
		}
		found.Store(true)
		return ""
	}
}
