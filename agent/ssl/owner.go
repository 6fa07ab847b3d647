package ssl

import (
	"fmt"
	"os"
	"os/user"
	"strconv"
	"sync"
	"syscall"
)

// The service account Puppet gives the ssldir's files and directories
// (owner and group "service" in Puppet's settings): when Puppet runs as
// root and the account named by its user and group settings (puppet)
// exists, its files are chowned to it; otherwise they stay root's.
var serviceAccount = struct {
	once     sync.Once
	uid, gid int
	ok       bool
}{}

// serviceIDs are the ids to chown to, ok false when nothing is to be
// changed (not root, or no puppet account).
func serviceIDs() (uid, gid int, ok bool) {
	if os.Geteuid() != 0 {
		return 0, 0, false
	}
	s := &serviceAccount
	s.once.Do(func() {
		u, err := user.Lookup("puppet")
		if err != nil {
			return
		}
		s.uid, err = strconv.Atoi(u.Uid)
		if err != nil {
			return
		}
		// The group setting is puppet too; without such a group, the
		// user's primary group (Puppet would leave the group alone).
		s.gid, err = strconv.Atoi(u.Gid)
		if err != nil {
			return
		}
		if g, err := user.LookupGroup("puppet"); err == nil {
			if id, err := strconv.Atoi(g.Gid); err == nil {
				s.gid = id
			}
		}
		s.ok = true
	})
	return s.uid, s.gid, s.ok
}

// chownService gives a file Puppet's service owner and group.
func chownService(f *os.File) error {
	uid, gid, ok := serviceIDs()
	if !ok {
		return nil
	}
	if err := f.Chown(uid, gid); err != nil {
		return fmt.Errorf("giving %s to the puppet account: %w", f.Name(), err)
	}
	return nil
}

// chownServiceDir gives a directory of the ssldir Puppet's service
// owner and group.
func chownServiceDir(d *dir) error {
	uid, gid, ok := serviceIDs()
	if !ok {
		return nil
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(d.fd, &st); err != nil {
		return err
	}
	if int(st.Uid) == uid && int(st.Gid) == gid {
		return nil
	}
	if err := syscall.Fchown(d.fd, uid, gid); err != nil {
		return fmt.Errorf("giving %s to the puppet account: %w", d.path, err)
	}
	return nil
}
