package catalog

import (
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	json "github.com/goccy/go-json"
)

// schedule is one of Puppet's schedule resources: when a resource naming
// it may be applied.
type schedule struct {
	period      string // hourly, daily, weekly, monthly, never, "" (any)
	periodmatch string // distance (default) or number
	repeat      int
	ranges      [][2]int // seconds from midnight, inclusive
	weekdays    map[time.Weekday]bool
}

// defaultSchedules are the ones Puppet adds to every catalog.
var defaultSchedules = map[string]schedule{
	"puppet":  {period: "hourly", repeat: 2},
	"hourly":  {period: "hourly", repeat: 1},
	"daily":   {period: "daily", repeat: 1},
	"weekly":  {period: "weekly", repeat: 1},
	"monthly": {period: "monthly", repeat: 1},
	"never":   {period: "never", repeat: 1},
}

var periodLength = map[string]time.Duration{
	"hourly": time.Hour, "daily": 24 * time.Hour, "weekly": 7 * 24 * time.Hour, "monthly": 30 * 24 * time.Hour,
}

// schedules is the walk's schedule state: the schedules the catalog
// declares and, per resource, when it was last applied.
type schedules struct {
	file    string
	defined map[string]schedule
	last    map[string]int64 // ref → unix seconds
	bad     map[string]string
	changed bool
}

// loadSchedules reads the catalog's schedule resources and the state file.
func loadSchedules(g *Graph, file string, log *slog.Logger) *schedules {
	s := &schedules{file: file, defined: map[string]schedule{}, last: map[string]int64{}, bad: map[string]string{}}
	for k, v := range defaultSchedules {
		s.defined[k] = v
	}
	for _, r := range g.Catalog.Resources {
		if !strings.EqualFold(r.Type, "schedule") {
			continue
		}
		sc, err := parseSchedule(r.Params)
		if err != nil {
			s.bad[r.Title] = err.Error()
			continue
		}
		s.defined[r.Title] = sc
	}
	if file != "" {
		data, err := os.ReadFile(file)
		if err == nil {
			if err := json.Unmarshal(data, &s.last); err != nil {
				log.Warn(fmt.Sprintf("schedule state %s is not readable (%v): starting afresh", file, err))
				s.last = map[string]int64{}
			}
		}
	}
	return s
}

func parseSchedule(p map[string]any) (schedule, error) {
	sc := schedule{repeat: 1, periodmatch: "distance"}
	if v, ok := p["period"].(string); ok {
		if _, known := periodLength[v]; !known && v != "never" {
			return sc, fmt.Errorf("invalid period %q", v)
		}
		sc.period = v
	}
	if v, ok := p["periodmatch"].(string); ok {
		sc.periodmatch = v
	}
	switch v := p["repeat"].(type) {
	case int64:
		sc.repeat = int(v)
	case string:
		n, err := strconv.Atoi(v)
		if err != nil {
			return sc, fmt.Errorf("invalid repeat %q", v)
		}
		sc.repeat = n
	}
	if sc.repeat < 1 {
		sc.repeat = 1
	}
	for _, r := range stringsOf(p["range"]) {
		lo, hi, ok := strings.Cut(r, "-")
		if !ok {
			return sc, fmt.Errorf("invalid range %q", r)
		}
		a, err1 := clock(lo)
		b, err2 := clock(hi)
		if err1 != nil || err2 != nil {
			return sc, fmt.Errorf("invalid range %q", r)
		}
		sc.ranges = append(sc.ranges, [2]int{a, b})
	}
	days := stringsOf(p["weekday"])
	if len(days) > 0 {
		sc.weekdays = map[time.Weekday]bool{}
		for _, d := range days {
			wd, ok := weekday(d)
			if !ok {
				return sc, fmt.Errorf("invalid weekday %q", d)
			}
			sc.weekdays[wd] = true
		}
	}
	return sc, nil
}

// clock reads H, H:M or H:M:S as seconds from midnight.
func clock(s string) (int, error) {
	parts := strings.Split(strings.TrimSpace(s), ":")
	if len(parts) > 3 {
		return 0, fmt.Errorf("bad time")
	}
	mult := []int{3600, 60, 1}
	t := 0
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("bad time")
		}
		t += n * mult[i]
	}
	return t, nil
}

func weekday(s string) (time.Weekday, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	if n, err := strconv.Atoi(s); err == nil && n >= 0 && n <= 7 {
		return time.Weekday(n % 7), true
	}
	for d := time.Sunday; d <= time.Saturday; d++ {
		name := strings.ToLower(d.String())
		if s == name || s == name[:3] {
			return d, true
		}
	}
	return 0, false
}

// allows reports whether v's schedule (none: always) lets it run now.
func (s *schedules) allows(v *vertex, now time.Time) bool {
	name, ok := v.res.Params["schedule"].(string)
	if !ok || name == "" {
		return true
	}
	sc, ok := s.defined[name]
	if !ok {
		return false
	}
	if len(sc.ranges) > 0 {
		sec := now.Hour()*3600 + now.Minute()*60 + now.Second()
		in := false
		for _, r := range sc.ranges {
			if r[0] <= r[1] && sec >= r[0] && sec <= r[1] || r[0] > r[1] && (sec >= r[0] || sec <= r[1]) {
				in = true
			}
		}
		if !in {
			return false
		}
	}
	if sc.weekdays != nil && !sc.weekdays[now.Weekday()] {
		return false
	}
	if sc.period == "never" {
		return false
	}
	if sc.period == "" {
		return true
	}
	last, ok := s.last[v.res.Ref()]
	if !ok {
		return true
	}
	prev := time.Unix(last, 0).In(now.Location())
	if sc.periodmatch == "number" {
		switch sc.period {
		case "hourly":
			return prev.Truncate(time.Hour) != now.Truncate(time.Hour)
		case "daily":
			return prev.YearDay() != now.YearDay() || prev.Year() != now.Year()
		case "weekly":
			py, pw := prev.ISOWeek()
			ny, nw := now.ISOWeek()
			return py != ny || pw != nw
		case "monthly":
			return prev.Month() != now.Month() || prev.Year() != now.Year()
		}
	}
	return now.Sub(prev) >= periodLength[sc.period]/time.Duration(sc.repeat)
}

// ran records that v was applied now (only resources with a schedule).
func (s *schedules) ran(v *vertex, now time.Time) {
	if name, ok := v.res.Params["schedule"].(string); ok && name != "" {
		s.last[v.res.Ref()] = now.Unix()
		s.changed = true
	}
}

// save writes the state file when something ran on a schedule.
func (s *schedules) save(log *slog.Logger) {
	if s.file == "" || !s.changed {
		return
	}
	saveState(s.file, "schedule state", s.last, log)
}
