package file

import (
	"fmt"
	"io/fs"
	"os/user"
	"strconv"
	"syscall"

	"github.com/pippet/pippet/applier"
)

// Owner and group lookups are cached for the process in env.Cache: names
// do not move under a running receiver often enough to matter, and a
// change made by this process drops them: a file resource rewriting
// /etc/passwd or /etc/group drops the ids, an exec that runs drops the
// whole cache (its command may have been a useradd).

func cacheGet(env *applier.Env, key string) (any, bool) {
	if env == nil || env.Cache == nil {
		return nil, false
	}
	return env.Cache.Get(key)
}

func cachePut(env *applier.Env, key string, v any) {
	if env != nil && env.Cache != nil {
		env.Cache.Put(key, v)
	}
}

// idDatabase: the files whose change drops the cached owner and group ids.
var idDatabase = map[string]bool{"/etc/passwd": true, "/etc/group": true}

// dropIDs forgets the cached owner and group lookups.
func dropIDs(env *applier.Env) {
	if env != nil && env.Cache != nil {
		env.Cache.DropPrefix("file:uid:")
		env.Cache.DropPrefix("file:gid:")
	}
}

// lookupID resolves a user (group=false) or group name or numeric id.
func lookupID(env *applier.Env, name string, group bool) (int, error) {
	if n, numeric, err := applier.ParseID(name); err != nil {
		return 0, err
	} else if numeric {
		return n, nil
	}
	key := "file:uid:" + name
	if group {
		key = "file:gid:" + name
	}
	if v, ok := cacheGet(env, key); ok {
		return v.(int), nil
	}
	var idStr string
	if group {
		g, err := user.LookupGroup(name)
		if err != nil {
			return 0, fmt.Errorf("could not find group %s", name)
		}
		idStr = g.Gid
	} else {
		u, err := user.Lookup(name)
		if err != nil {
			return 0, fmt.Errorf("could not find user %s", name)
		}
		idStr = u.Uid
	}
	id, numeric, err := applier.ParseID(idStr)
	if err != nil || !numeric {
		return 0, fmt.Errorf("id of %s is not a valid id: %s", name, idStr)
	}
	cachePut(env, key, id)
	return id, nil
}

// idName names a uid or gid for messages, or gives the number.
func idName(env *applier.Env, id int, group bool) string {
	key := "file:uname:" + strconv.Itoa(id)
	if group {
		key = "file:gname:" + strconv.Itoa(id)
	}
	if v, ok := cacheGet(env, key); ok {
		return v.(string)
	}
	name := strconv.Itoa(id)
	if group {
		if g, err := user.LookupGroupId(name); err == nil {
			name = g.Name
		}
	} else if u, err := user.LookupId(name); err == nil {
		name = u.Username
	}
	cachePut(env, key, name)
	return name
}

func statOwner(fi fs.FileInfo) (int, int) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid), int(st.Gid)
	}
	return -1, -1
}

func statMode(fi fs.FileInfo) uint32 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Mode & 0o7777
	}
	return uint32(fi.Mode().Perm())
}
