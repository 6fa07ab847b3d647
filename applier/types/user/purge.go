package user

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"syscall"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/atomicfile"
	"github.com/pippet/pippet/applier/types/internal/accounts"
)

// shellUsable is Puppet's check_valid_shell.
func shellUsable(shell string) error {
	st, err := os.Stat(shell)
	if err != nil {
		return fmt.Errorf("Shell %s must exist", shell)
	}
	if st.IsDir() || syscall.Access(shell, 1) != nil {
		return fmt.Errorf("Shell %s must be executable", shell)
	}
	return nil
}

// mungePurge is Puppet's validation of purge_ssh_keys, keeping the value
// as a list of files still to be expanded (true is ~/.ssh/authorized_keys,
// false the empty list).
func mungePurge(v any) (any, error) {
	switch x := v.(type) {
	case bool:
		if x {
			return []any{"~/.ssh/authorized_keys"}, nil
		}
		return []any{}, nil
	case string:
		switch x {
		case "true":
			return []any{"~/.ssh/authorized_keys"}, nil
		case "false":
			return []any{}, nil
		}
		return mungePurge([]any{x})
	case []any:
		out := make([]any, 0, len(x))
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("Each entry for purge_ssh_keys must be a string, not a %s", rubyClass(e))
			}
			if !strings.HasPrefix(s, "/") && !strings.HasPrefix(s, "~/") && !strings.HasPrefix(s, "%h/") {
				return nil, fmt.Errorf("Paths to keyfiles must be absolute, not %s", s)
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, fmt.Errorf("purge_ssh_keys must be true, false, or an array of file names, not %s", applier.FormatValue(v))
}

func rubyClass(v any) string {
	switch v.(type) {
	case int64, int:
		return "Integer"
	case float64:
		return "Float"
	case bool:
		return "Boolean"
	case []any:
		return "Array"
	case map[string]any:
		return "Hash"
	}
	return fmt.Sprintf("%T", v)
}

// purgeInSync: in sync when nothing is to be purged or no key was found.
func purgeInSync(is, should any) bool {
	if l, _ := should.([]any); len(l) == 0 {
		return true
	}
	l, _ := is.([]any)
	return len(l) == 0
}

func formatPurge(v any) string {
	l, _ := v.([]any)
	parts := make([]string, len(l))
	for i, e := range l {
		parts[i] = applier.FormatValue(e)
	}
	return strings.Join(parts, ", ")
}

// resolvePurge expands ~/ and %h/ against the home directory: the
// request's home, else the account's; without either those files are
// dropped, as Puppet drops them.
func (p *provider) resolvePurge(files []string) error {
	home := p.r.String("home")
	if home == "" {
		users, err := accounts.LoadUsers()
		if err != nil {
			return err
		}
		if u := users.Lookup(p.r.Name()); u != nil {
			home = u.Home
		}
	}
	out := make([]any, 0, len(files))
	for _, f := range files {
		for _, pre := range []string{"~/", "%h/"} {
			if strings.HasPrefix(f, pre) {
				if home == "" {
					f = ""
				} else {
					f = strings.TrimRight(home, "/") + "/" + f[len(pre):]
				}
			}
		}
		if f != "" {
			out = append(out, f)
		}
	}
	p.r.Set("purge_ssh_keys", out)
	return nil
}

// keyLine is puppetlabs-sshkeys_core's key line: options, type, key, name.
var keyLine = regexp.MustCompile(`^(?:(.+)\s+)?(ssh-dss|ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp256|` +
	`ecdsa-sha2-nistp384|ecdsa-sha2-nistp521|ecdsa-sk|ed25519-sk|` +
	`sk-ecdsa-sha2-nistp256@openssh\.com|sk-ssh-ed25519@openssh\.com|` +
	`ssh-rsa-cert-v01@openssh\.com|ssh-ed25519-cert-v01@openssh\.com|` +
	`ssh-dss-cert-v01@openssh\.com|ecdsa-sha2-nistp256-cert-v01@openssh\.com|` +
	`ecdsa-sha2-nistp384-cert-v01@openssh\.com|ecdsa-sha2-nistp521-cert-v01@openssh\.com)\s+([^ ]+)\s*(.*)$`)

// isKey reports whether line is a key line (comments and blank lines are not).
func isKey(line []byte) bool {
	t := bytes.TrimLeft(line, " \t")
	if len(t) == 0 || t[0] == '#' {
		return false
	}
	return keyLine.Match(line)
}

// readKeyFile reads a key file that is a regular file; a missing file, a
// symbolic link or anything else is no key file (nil, nil): a user's home
// is theirs, and a link there must not make us read or replace another file.
func readKeyFile(path string) ([]byte, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return nil, nil
	}
	data, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if len(data) > maxKeyFile {
		return nil, fmt.Errorf("%s is larger than %d bytes: not a key file", path, maxKeyFile)
	}
	return data, nil
}

// maxKeyFile bounds a key file read.
const maxKeyFile = 16 << 20

// unmanagedKeys lists the key lines found in files, as "FILE: NAME" (the
// key's comment, or unnamed-N as Puppet names a key without one).
func unmanagedKeys(files []string) ([]any, error) {
	var found []any
	for _, f := range files {
		data, err := readKeyFile(f)
		if err != nil {
			return nil, err
		}
		unnamed := 0
		for _, line := range bytes.Split(data, []byte("\n")) {
			if !isKey(line) {
				continue
			}
			name := strings.TrimSpace(string(keyLine.FindSubmatch(line)[4]))
			if name == "" {
				unnamed++
				name = fmt.Sprintf("%s:unnamed-%d", f, unnamed)
			}
			found = append(found, name)
		}
	}
	return found, nil
}

// purge removes every key line from files, keeping the other lines, each
// file replaced atomically with its mode and owner. found is what Get
// reported, for the message.
func purge(ctx context.Context, files []string, found any) (string, error) {
	for _, f := range files {
		data, err := readKeyFile(f)
		if err != nil || data == nil {
			if err != nil {
				return "", err
			}
			continue
		}
		var out []byte
		lines := bytes.SplitAfter(data, []byte("\n"))
		removed := false
		for _, l := range lines {
			if isKey(bytes.TrimRight(l, "\n")) {
				removed = true
				continue
			}
			out = append(out, l...)
		}
		if !removed {
			continue
		}
		if err := atomicfile.Write(ctx, f, out, atomicfile.Options{Mode: 0o600, UID: -1, GID: -1, KeepExisting: true}); err != nil {
			return "", err
		}
	}
	return "purged unmanaged SSH keys: " + formatPurge(found), nil
}
