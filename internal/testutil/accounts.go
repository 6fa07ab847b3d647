package testutil

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BulkUsers adds n real accounts to this machine's /etc/passwd,
// /etc/shadow and /etc/group, named prefix0000, prefix0001, ... with uids
// (and a private group each, same number) from firstID, and removes them
// when tb ends (and before adding, should an earlier run have left any).
// Only root may call it; it takes the machine lock "accounts".
//
// useradd or newusers would take minutes for thousands of accounts (each
// one a PAM password change; newusers measured 0.4 s an account here), so
// the lines are written the way those tools write them, in one go: under
// the shadow suite's locks (lckpwdf's fcntl lock on /etc/.pwd.lock, and
// the FILE.lock files its commonio takes), each file rewritten to a
// temporary file, fsynced and renamed over the original, mode and owner
// kept. The accounts are as real as useradd's: getent, id and our
// providers see them.
func BulkUsers(tb testing.TB, prefix string, firstID, n int) []string {
	tb.Helper()
	if os.Geteuid() != 0 {
		tb.Skip("not root: adds real accounts")
	}
	MachineLock(tb, "accounts")
	names := make([]string, n)
	var pw, sh, gr bytes.Buffer
	days := time.Now().Unix() / 86400
	for i := range names {
		names[i] = fmt.Sprintf("%s%04d", prefix, i)
		id := firstID + i
		fmt.Fprintf(&pw, "%s:x:%d:%d:bulk %d:/nonexistent/%s:/usr/sbin/nologin\n", names[i], id, id, i, names[i])
		fmt.Fprintf(&sh, "%s:!:%d:0:99999:7:::\n", names[i], days)
		fmt.Fprintf(&gr, "%s:x:%d:\n", names[i], id)
	}
	remove := func() {
		if err := editAccounts(prefix, nil, nil, nil); err != nil {
			tb.Errorf("removing the bulk accounts %s*: %v", prefix, err)
		}
	}
	tb.Cleanup(remove)
	if err := editAccounts(prefix, pw.Bytes(), sh.Bytes(), gr.Bytes()); err != nil {
		tb.Fatalf("adding %d accounts %s*: %v", n, prefix, err)
	}
	return names
}

// editAccounts drops every line whose name starts with prefix from
// passwd, shadow, group and gshadow, then appends the given lines, under
// the shadow suite's locks.
func editAccounts(prefix string, pw, sh, gr []byte) error {
	lock, err := os.OpenFile("/etc/.pwd.lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close()
	fl := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0}
	if err := syscall.FcntlFlock(lock.Fd(), syscall.F_SETLKW, &fl); err != nil {
		return fmt.Errorf("lckpwdf: %w", err)
	}
	files := []struct {
		path string
		add  []byte
	}{{"/etc/passwd", pw}, {"/etc/shadow", sh}, {"/etc/group", gr}, {"/etc/gshadow", nil}}
	for _, f := range files {
		if err := editFile(f.path, prefix, f.add); err != nil {
			return err
		}
	}
	return nil
}

// editFile rewrites one database file under its FILE.lock.
func editFile(path, prefix string, add []byte) error {
	lockPath := path + ".lock"
	var lf *os.File
	var err error
	for try := 0; ; try++ {
		lf, err = os.OpenFile(lockPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil || !os.IsExist(err) || try > 300 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("locking %s: %w", path, err)
	}
	fmt.Fprintf(lf, "%d", os.Getpid())
	lf.Close()
	defer os.Remove(lockPath)

	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, prefix) {
			continue
		}
		out.WriteString(line)
	}
	out.Write(add)
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".bulk"+strconv.Itoa(os.Getpid()))
	t, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, fi.Mode().Perm())
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	st := fi.Sys().(*syscall.Stat_t)
	if _, err := t.Write(out.Bytes()); err == nil {
		err = t.Chown(int(st.Uid), int(st.Gid))
		if err == nil {
			err = t.Chmod(fi.Mode().Perm())
		}
		if err == nil {
			err = t.Sync()
		}
		if cerr := t.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	} else {
		t.Close()
		return err
	}
	return os.Rename(tmp, path)
}
