package command

import (
	"bufio"
	"os"
	"strconv"
	"sync"
	"syscall"
)

// The watchdog ends the commands of a receiver that was killed outright.
//
// KillAll covers every exit the receiver sees coming. SIGKILL gives it no
// chance, and a command's direct child dies of its parent-death signal,
// but that child's own children (the shell's pipeline, a daemon's worker)
// would run on. So the first command starts one watchdog per process: this
// same binary re-executed (/proc/self/exe) with watchdogEnv set, which
// the package's init turns into the watchdog before main runs. It lives in
// a session of its own (a controller killing the receiver's process group
// must not take it along), reads "+PGID" and "-PGID" lines on its stdin as
// commands start and end, and when its stdin ends, which happens whatever
// way the receiver died, kills every group still listed and exits.
const watchdogEnv = "PIPPET_COMMAND_WATCHDOG"

func init() {
	if os.Getenv(watchdogEnv) == "1" {
		runWatchdog()
		os.Exit(0)
	}
}

func runWatchdog() {
	groups := map[int]bool{}
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		line := sc.Text()
		if len(line) < 2 {
			continue
		}
		pgid, err := strconv.Atoi(line[1:])
		if err != nil || pgid <= 1 {
			continue
		}
		if line[0] == '+' {
			groups[pgid] = true
		} else {
			delete(groups, pgid)
		}
	}
	for pgid := range groups {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
}

var watchdog struct {
	once sync.Once
	w    *os.File // nil when it could not be started
}

// watch tells the watchdog, started on first use, that a group started
// (+) or ended (-). The watchdog is best effort: a failure to start it
// leaves KillAll and the parent-death signal.
func watch(op byte, pgid int) {
	watchdog.once.Do(startWatchdog)
	if watchdog.w != nil {
		var b [24]byte
		line := strconv.AppendInt(append(b[:0], op), int64(pgid), 10)
		_, _ = watchdog.w.Write(append(line, '\n'))
	}
}

func startWatchdog() {
	exe, err := os.Executable()
	if err != nil {
		return
	}
	r, w, err := os.Pipe()
	if err != nil {
		return
	}
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		r.Close()
		w.Close()
		return
	}
	defer devnull.Close()
	p, err := os.StartProcess(exe, []string{exe}, &os.ProcAttr{
		Env:   []string{watchdogEnv + "=1"},
		Files: []*os.File{r, devnull, devnull},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
	r.Close()
	if err != nil {
		w.Close()
		return
	}
	_ = p.Release()
	watchdog.w = w
}
