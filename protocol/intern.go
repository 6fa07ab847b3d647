package protocol

// internType returns the common type names without allocating.
func internType(b []byte) string {
	switch string(b) {
	case "file":
		return "file"
	case "exec":
		return "exec"
	case "notify":
		return "notify"
	case "package":
		return "package"
	case "service":
		return "service"
	case "user":
		return "user"
	case "group":
		return "group"
	case "cron":
		return "cron"
	case "host":
		return "host"
	case "mount":
		return "mount"
	case "tidy":
		return "tidy"
	}
	return string(b)
}

// internKeyOK returns the common attribute names without allocating.
func internKeyOK(b []byte) (string, bool) {
	switch string(b) {
	case "ensure":
		return "ensure", true
	case "content":
		return "content", true
	case "mode":
		return "mode", true
	case "owner":
		return "owner", true
	case "group":
		return "group", true
	case "source":
		return "source", true
	case "target":
		return "target", true
	case "path":
		return "path", true
	case "message":
		return "message", true
	case "command":
		return "command", true
	case "creates":
		return "creates", true
	case "backup":
		return "backup", true
	case "replace":
		return "replace", true
	case "force":
		return "force", true
	case "recurse":
		return "recurse", true
	case "name":
		return "name", true
	case "provider":
		return "provider", true
	}
	return "", false
}

// internPlain returns common plain values that resolve to themselves as
// strings, without allocating.
func internPlain(b []byte) (any, bool) {
	switch string(b) {
	case "file":
		return "file", true
	case "directory":
		return "directory", true
	case "present":
		return "present", true
	case "absent":
		return "absent", true
	case "link":
		return "link", true
	case "root":
		return "root", true
	case "running":
		return "running", true
	case "stopped":
		return "stopped", true
	case "installed":
		return "installed", true
	case "latest":
		return "latest", true
	}
	return nil, false
}

// internQuotedOK returns the value of a quoted string without escapes
// when it is a common mode or a word internPlain knows, without
// allocating.
func internQuotedOK(b []byte) (any, bool) {
	switch string(b) {
	case "0644":
		return "0644", true
	case "0755":
		return "0755", true
	case "0600":
		return "0600", true
	case "0640":
		return "0640", true
	case "0700":
		return "0700", true
	case "0750":
		return "0750", true
	case "0444":
		return "0444", true
	case "0555":
		return "0555", true
	case "0664":
		return "0664", true
	case "0775":
		return "0775", true
	}
	return internPlain(b)
}

// valueCache remembers the last short strings the fast path decoded, so
// that one repeated from line to line (an owner, a group, a directory, an
// attribute no table above knows) is a single shared string, and a single
// boxed value, instead of new ones on every line. It is direct-mapped with
// cacheSlots slots of strings up to cacheMaxLen bytes: bounded whatever the
// input, and a miss costs a hash of those few bytes.
type valueCache struct {
	slots [cacheSlots]cacheSlot
}

const (
	cacheSlots  = 64
	cacheMaxLen = 32
)

type cacheSlot struct {
	kind byte   // 'k' key, 'q' quoted string, 'p' plain scalar
	text string // the bytes as written
	v    any    // their value
}

// slot returns the slot for text of this kind, and whether it holds it.
func (c *valueCache) slot(kind byte, b []byte) (*cacheSlot, bool) {
	h := uint32(2166136261) ^ uint32(kind) // FNV-1a
	for _, x := range b {
		h = (h ^ uint32(x)) * 16777619
	}
	e := &c.slots[h%cacheSlots]
	return e, e.kind == kind && e.text == string(b)
}

// key returns an attribute name as a string.
func (st *fastState) key(b []byte) string {
	if k, ok := internKeyOK(b); ok {
		return k
	}
	if st.cache == nil || len(b) > cacheMaxLen {
		return string(b)
	}
	return st.cachedString('k', b).text
}

// quoted returns the value of a quoted string without escapes.
func (st *fastState) quoted(b []byte) any {
	if v, ok := internQuotedOK(b); ok {
		return v
	}
	if st.cache == nil || len(b) > cacheMaxLen {
		return string(b)
	}
	return st.cachedString('q', b).v
}

// cachedString returns the cache slot holding b as a string of this kind,
// filling it on a miss: its text, and the same string boxed once (v), so
// a repeated key or value costs neither a string nor an interface value.
func (st *fastState) cachedString(kind byte, b []byte) *cacheSlot {
	e, hit := st.cache.slot(kind, b)
	if !hit {
		s := string(b)
		*e = cacheSlot{kind: kind, text: s, v: s}
	}
	return e
}

// plain resolves a plain scalar by Psych's rules (resolvePlain); ok is
// false when the general path must decide. (Its values are immutable
// scalars, string, int64, float64, bool or nil, so sharing them is safe.)
func (st *fastState) plain(b []byte) (any, bool) {
	if v, ok := internPlain(b); ok {
		return v, true
	}
	if st.cache == nil || len(b) > cacheMaxLen {
		v, err := resolvePlain(string(b))
		return v, err == nil
	}
	e, hit := st.cache.slot('p', b)
	if !hit {
		s := string(b)
		v, err := resolvePlain(s)
		if err != nil {
			return nil, false
		}
		*e = cacheSlot{kind: 'p', text: s, v: v}
	}
	return e.v, true
}
