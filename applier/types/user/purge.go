package user

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"syscall"

	"github.com/pippet/pippet/applier"
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

// isKey reports whether line is a key line (comments and blank lines are
// not). Leading blanks are skipped, as sshd skips them: " ssh-rsa AAAA"
// is a key that logs in.
func isKey(line []byte) bool {
	t := bytes.TrimLeft(line, " \t")
	if len(t) == 0 || t[0] == '#' {
		return false
	}
	return keyLine.Match(t)
}

// maxKeyFile bounds a key file read.
const maxKeyFile = 16 << 20

// keyNames names each key line of data as Puppet's purge_ssh_keys does:
// the key's comment, or FILE:unnamed-N (N counting the file's keys
// without one); "" for a line that is no key.
func keyNames(file string, lines [][]byte) []string {
	names := make([]string, len(lines))
	unnamed := 0
	for i, line := range lines {
		line = bytes.TrimRight(line, "\n")
		if !isKey(line) {
			continue
		}
		name := strings.TrimSpace(string(keyLine.FindSubmatch(bytes.TrimLeft(line, " \t"))[4]))
		if name == "" {
			unnamed++
			name = fmt.Sprintf("%s:unnamed-%d", file, unnamed)
		}
		names[i] = name
	}
	return names
}

// managedKey reports whether the run manages the key named name (an
// ssh_authorized_key of the catalog or of the declared run, by title or
// alias): Puppet's purge generates no removal for it.
type managedKey func(name string) bool

// managedKeys is the run's test of ctx (nil: nothing is managed, the
// resource is applied alone).
func managedKeys(ctx context.Context) managedKey {
	run := applier.RunFrom(ctx)
	if run == nil {
		return func(string) bool { return false }
	}
	return func(name string) bool { return run.Managed("ssh_authorized_key", name) }
}

// unmanagedKeys lists the names of the key lines found in files that the
// run does not manage (the key's comment, or FILE:unnamed-N as Puppet
// names a key without one), each file read as the user would
// (openKeyFile); a file that is no key file for the user is logged and
// skipped.
func unmanagedKeys(files []string, p *perms, managed managedKey, log func(string)) ([]any, error) {
	var found []any
	for _, f := range files {
		k, err := openKeyFile(f, p)
		if skip(err, log) {
			continue
		}
		if err != nil {
			return nil, err
		}
		data := k.data
		k.close()
		for _, name := range keyNames(f, bytes.Split(data, []byte("\n"))) {
			if name != "" && !managed(name) {
				found = append(found, name)
			}
		}
	}
	return found, nil
}

// skip reports (and logs) a file that is no key file for the user.
func skip(err error, log func(string)) bool {
	var nk *notKeyFile
	if !errors.As(err, &nk) {
		return false
	}
	if log != nil {
		log(nk.reason)
	}
	return true
}

// purge removes every key line the run does not manage from files,
// keeping the other lines, each
// file replaced atomically in place with its mode and owner, where the
// user could (keyFile.replace). found is what Get reported, for the
// message.
func purge(ctx context.Context, files []string, p *perms, managed managedKey, found any) (string, error) {
	for _, f := range files {
		k, err := openKeyFile(f, p)
		if skip(err, nil) {
			continue
		}
		if err != nil {
			return "", err
		}
		var out []byte
		removed := false
		lines := bytes.SplitAfter(k.data, []byte("\n"))
		names := keyNames(f, lines)
		for i, l := range lines {
			if names[i] != "" && !managed(names[i]) {
				removed = true
				continue
			}
			out = append(out, l...)
		}
		if removed {
			err = k.replace(ctx, p, out)
		}
		k.close()
		if err != nil {
			return "", err
		}
	}
	return "purged unmanaged SSH keys: " + formatPurge(found), nil
}
