package testutil

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// Accounts lists the users (/etc/passwd) and groups (/etc/group) whose
// names match re, as "user NAME" and "group NAME".
func Accounts(re *regexp.Regexp) []string {
	var out []string
	for _, f := range []struct{ path, kind string }{{"/etc/passwd", "user"}, {"/etc/group", "group"}} {
		fh, err := os.Open(f.path)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			name, _, _ := strings.Cut(sc.Text(), ":")
			if re.MatchString(name) {
				out = append(out, f.kind+" "+name)
			}
		}
		fh.Close()
	}
	return out
}

// RunLeakingNoAccounts runs a package's tests (from its TestMain) and
// fails them when a user or group whose name matches re, the names that
// package's tests use, is left on the machine afterwards: a test that
// adds an account removes it, whatever happened, and the next account's
// ids on the machine are not changed by what a test left behind. re must
// match only that package's names: packages run in parallel, each with
// its own.
func RunLeakingNoAccounts(m *testing.M, re *regexp.Regexp) int {
	code := m.Run()
	if left := Accounts(re); len(left) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: the tests left accounts behind (%s): %s\n", re, strings.Join(left, ", "))
		if code == 0 {
			code = 1
		}
	}
	return code
}
