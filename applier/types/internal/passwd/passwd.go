// Package passwd looks accounts up in /etc/passwd and /etc/group for the
// types that act for a user (ssh_authorized_key, cron): a user's ids and
// home, and the groups it belongs to.
//
// The files are parsed directly (no getent process, no cgo) and kept in a
// sysfile cache while unchanged, so a lookup on an unchanged system costs
// a stat. Accounts only NSS knows (LDAP, sssd) are not seen; Puppet's
// providers look them up through the C library.
package passwd

import (
	"bytes"
	"strconv"

	"github.com/pippet/pippet/applier/sysfile"
)

// Files are the databases read; tests may point them elsewhere.
var (
	PasswdFile = "/etc/passwd"
	GroupFile  = "/etc/group"
)

// User is one account.
type User struct {
	Name     string
	UID, GID int
	Home     string
}

var (
	users  sysfile.Cache[map[string]*User]
	groups sysfile.Cache[map[string][]int] // member name to the gids listing it
)

func parseUsers(data []byte) (map[string]*User, error) {
	m := map[string]*User{}
	for _, line := range bytes.Split(data, []byte("\n")) {
		f := bytes.Split(line, []byte(":"))
		if len(f) < 7 || len(f[0]) == 0 || f[0][0] == '+' || f[0][0] == '-' {
			continue
		}
		uid, err1 := strconv.Atoi(string(f[2]))
		gid, err2 := strconv.Atoi(string(f[3]))
		if err1 != nil || err2 != nil {
			continue
		}
		name := string(f[0])
		if _, dup := m[name]; dup {
			continue // the first entry wins, as getpwnam finds it
		}
		m[name] = &User{Name: name, UID: uid, GID: gid, Home: string(f[5])}
	}
	return m, nil
}

// Lookup returns the account called name, nil when there is none.
func Lookup(name string) (*User, error) {
	m, err := users.Load(PasswdFile, parseUsers)
	if err != nil {
		return nil, err
	}
	return m[name], nil
}

func parseGroups(data []byte) (map[string][]int, error) {
	m := map[string][]int{}
	for _, line := range bytes.Split(data, []byte("\n")) {
		f := bytes.Split(line, []byte(":"))
		if len(f) < 4 {
			continue
		}
		gid, err := strconv.Atoi(string(f[2]))
		if err != nil {
			continue
		}
		for _, mem := range bytes.Split(f[3], []byte(",")) {
			if len(mem) > 0 {
				m[string(mem)] = append(m[string(mem)], gid)
			}
		}
	}
	return m, nil
}

// Groups returns the ids of every group u belongs to: its primary group
// and those listing it as a member.
func Groups(u *User) ([]int, error) {
	m, err := groups.Load(GroupFile, parseGroups)
	if err != nil && !sysfile.IsNotExist(err) {
		return nil, err
	}
	return append([]int{u.GID}, m[u.Name]...), nil
}
