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

// internKey returns the common attribute names without allocating.
func internKey(b []byte) string {
	switch string(b) {
	case "ensure":
		return "ensure"
	case "content":
		return "content"
	case "mode":
		return "mode"
	case "owner":
		return "owner"
	case "group":
		return "group"
	case "source":
		return "source"
	case "target":
		return "target"
	case "path":
		return "path"
	case "message":
		return "message"
	case "command":
		return "command"
	case "creates":
		return "creates"
	case "backup":
		return "backup"
	case "replace":
		return "replace"
	case "force":
		return "force"
	case "recurse":
		return "recurse"
	case "name":
		return "name"
	case "provider":
		return "provider"
	}
	return string(b)
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

// internQuoted returns the value of a quoted string without escapes:
// common modes and the words internPlain knows without allocating, any
// other string as a new one.
func internQuoted(b []byte) any {
	switch string(b) {
	case "0644":
		return "0644"
	case "0755":
		return "0755"
	case "0600":
		return "0600"
	case "0640":
		return "0640"
	case "0700":
		return "0700"
	case "0750":
		return "0750"
	case "0444":
		return "0444"
	case "0555":
		return "0555"
	case "0664":
		return "0664"
	case "0775":
		return "0775"
	}
	if v, ok := internPlain(b); ok {
		return v
	}
	return string(b)
}
