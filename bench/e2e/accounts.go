package main

// Scenarios of the user and group types. They change the machine's
// account databases, so they need root: without it they are left out
// (with a line saying so). The accounts are private: names pipb*, pipbg*,
// pipc*, ids 48500-48999, all sharing one primary group pipbg (gid 48500),
// made once and removed at the end (removeAccounts).

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// accountsN is how many different users and groups the requests name.
const accountsN = 1000

// createN is how many users the create scenario makes per run.
const createN = 1000

func bname(i int) string  { return fmt.Sprintf("pipb%04d", i%accountsN) }
func bgname(i int) string { return fmt.Sprintf("pipbg%04d", i%accountsN) }
func cname(i int) string  { return fmt.Sprintf("pipc%04d", i) }
func bid(i int) int       { return 48500 + i%500 }

// ids maps the names of an account database to their id (third field).
func ids(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m := map[string]string{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		if p := strings.SplitN(s.Text(), ":", 4); len(p) == 4 {
			m[p[0]] = p[2]
		}
	}
	return m, s.Err()
}

// runTool runs a shadow tool; other processes (tests running beside the
// benchmark) may hold the databases' locks for a moment, so a failure is
// tried again a few times.
func runTool(argv ...string) error {
	var err error
	var out []byte
	for try := 0; try < 10; try++ {
		if out, err = exec.Command(argv[0], argv[1:]...).CombinedOutput(); err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, out)
}

// prepareAccounts makes the primary group, the 1,000 groups and the
// 1,000 users the unchanged scenarios name, if they are not there yet.
func prepareAccounts(string, int) error {
	groups, err := ids("/etc/group")
	if err != nil {
		return err
	}
	group := func(name, gid string) error {
		switch have, ok := groups[name]; {
		case !ok:
			return runTool("groupadd", "-g", gid, "-o", name)
		case have != gid:
			return runTool("groupmod", "-g", gid, "-o", name)
		}
		return nil
	}
	if err := group("pipbg", "48500"); err != nil {
		return err
	}
	for i := 0; i < accountsN; i++ {
		if err := group(bgname(i), strconv.Itoa(bid(i))); err != nil {
			return err
		}
	}
	users, err := ids("/etc/passwd")
	if err != nil {
		return err
	}
	for i := 0; i < accountsN; i++ {
		if _, ok := users[bname(i)]; !ok {
			if err := runTool("useradd", "-u", strconv.Itoa(bid(i)), "-o", "-g", "48500", "-d", "/nonexistent", "-s", "/bin/sh", "-M", bname(i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// prepareCreate removes the users the create scenario makes.
func prepareCreate(dir string, n int) error {
	if err := prepareAccounts(dir, n); err != nil {
		return err
	}
	users, err := ids("/etc/passwd")
	if err != nil {
		return err
	}
	for i := 0; i < createN; i++ {
		if _, ok := users[cname(i)]; ok {
			if err := runTool("userdel", cname(i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// removeAccounts removes every account the scenarios made (only those
// that exist: a run without the account scenarios spends nothing here).
func removeAccounts() {
	users, _ := ids("/etc/passwd")
	groups, _ := ids("/etc/group")
	del := func(tool, name string, db map[string]string) {
		if _, ok := db[name]; ok || db == nil {
			_ = exec.Command(tool, name).Run()
		}
	}
	for i := 0; i < createN; i++ {
		del("userdel", cname(i), users)
	}
	for i := 0; i < accountsN; i++ {
		del("userdel", bname(i), users)
		del("groupdel", bgname(i), groups)
	}
	del("groupdel", "pipbg", groups)
}

// floorStatFile: a stat of one database file and the answer write, per resource.
func floorStatFile(path string) func(f *floorInput, answer io.Writer) error {
	return func(f *floorInput, answer io.Writer) error {
		for range f.paths {
			var st syscall.Stat_t
			if err := syscall.Stat(path, &st); err != nil {
				return err
			}
			if _, err := answer.Write(answerLine); err != nil {
				return err
			}
		}
		return nil
	}
}

func useraddArgv(i int) []string {
	return []string{"/usr/sbin/useradd", "-g", "48500", "-u", strconv.Itoa(bid(i)), "-o", "-M", cname(i)}
}

// floorUseradd: the useradd processes themselves, one after the other,
// and the answer write; the users are removed again (outside the timing,
// by the next prepare).
func floorUseradd(f *floorInput, answer io.Writer) error {
	for i := range f.paths {
		if err := runTool(useraddArgv(i)...); err != nil {
			return err
		}
		if _, err := answer.Write(answerLine); err != nil {
			return err
		}
	}
	return nil
}

func accountScenarios() []scenario {
	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "e2e: not root: the user and group scenarios are left out")
		return nil
	}
	return []scenario{
		{
			name:    "user unchanged (1,000 accounts), floor: stat /etc/passwd",
			prepare: prepareAccounts,
			line: func(_ string, i int) string {
				return `{"type":"user","title":"` + bname(i) + `","params":"{ensure: present, uid: ` + strconv.Itoa(bid(i)) +
					`, gid: 48500, home: /nonexistent, shell: /bin/sh}"}`
			},
			floor: floorStatFile("/etc/passwd"),
			want:  false,
		},
		{
			name:    "group unchanged (1,000 groups), floor: stat /etc/group",
			prepare: prepareAccounts,
			line: func(_ string, i int) string {
				return `{"type":"group","title":"` + bgname(i) + `","params":"{ensure: present, gid: ` + strconv.Itoa(bid(i)) + `}"}`
			},
			floor: floorStatFile("/etc/group"),
			want:  false,
		},
		{
			name:    "user create (1,000 users), floor: the useradd processes",
			n:       createN,
			prepare: prepareCreate,
			line: func(_ string, i int) string {
				return `{"type":"user","title":"` + cname(i) + `","params":"{uid: ` + strconv.Itoa(bid(i)) +
					`, gid: 48500, allowdupe: true}"}`
			},
			floor: floorUseradd,
			want:  true,
		},
	}
}
