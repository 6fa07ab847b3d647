package agent

import (
	"bytes"
	"os"
	"strconv"
	"time"
)

// clockTicks is the unit of /proc's process times (USER_HZ, 100 on
// every Linux architecture).
const clockTicks = 100

// ProcessStart is when this process started, as the kernel says
// (/proc/self/stat's starttime after /proc/stat's btime), to the
// hundredth of a second: the beginning of the report's startup_time, as
// Puppet's agent measures it from its start. The zero time when /proc
// cannot say (the run then counts from its own beginning).
func ProcessStart() time.Time {
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return time.Time{}
	}
	// The command name may hold spaces and parentheses: the fields
	// follow its last ')'. starttime is field 22, the 20th after it.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return time.Time{}
	}
	f := bytes.Fields(stat[i+1:])
	if len(f) < 20 {
		return time.Time{}
	}
	ticks, err := strconv.ParseInt(string(f[19]), 10, 64)
	if err != nil {
		return time.Time{}
	}
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return time.Time{}
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("btime ")); ok {
			boot, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
			if err != nil {
				return time.Time{}
			}
			return time.Unix(boot, 0).Add(time.Duration(ticks) * time.Second / clockTicks)
		}
	}
	return time.Time{}
}
