package catalog

import (
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"time"

	json "github.com/goccy/go-json"

	"github.com/pippet/pippet/applier/sysfile"
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
		data, err := sysfile.ReadRegular(file, 0)
		if err == nil {
			if err := json.Unmarshal(data, &s.last); err != nil {
				log.Warn(fmt.Sprintf("schedule state %s is not readable (%v): starting afresh", file, err))
				s.last = map[string]int64{}
			}
		}
	}
	return s
}

// parseSchedule reads a schedule's parameters as Puppet's schedule type
// validates and munges them, with its messages: a schedule Puppet
// refuses is an error (the catalog is refused, as Puppet refuses it).
func parseSchedule(p map[string]any) (schedule, error) {
	sc := schedule{repeat: 1, periodmatch: "distance"}
	if v, ok := p["range"]; ok {
		values := stringsOrScalar(v)
		for _, r := range values {
			if !rangeValue.MatchString(r) {
				return sc, fmt.Errorf("Parameter range failed: Invalid range value '%s'", r)
			}
		}
		for _, r := range values {
			lohi, err := munge(r)
			if err != nil {
				return sc, fmt.Errorf("Parameter range failed: Munging failed for value %s in class range: %w", rubyInspect(v), err)
			}
			sc.ranges = append(sc.ranges, lohi)
		}
	}
	if v, ok := p["periodmatch"]; ok {
		s := fmt.Sprint(v)
		if s != "number" && s != "distance" {
			return sc, fmt.Errorf("Parameter periodmatch failed: Invalid value %q. Valid values are number, distance.", s)
		}
		sc.periodmatch = s
	}
	if v, ok := p["period"]; ok {
		s := fmt.Sprint(v)
		if _, known := periodLength[s]; !known && s != "never" {
			return sc, fmt.Errorf("Parameter period failed: Invalid value %q. Valid values are hourly, daily, weekly, monthly, never.", s)
		}
		sc.period = s
	}
	if v, ok := p["repeat"]; ok {
		n, ok := scheduleInt(v)
		if !ok {
			return sc, fmt.Errorf("Parameter repeat failed: Repeat must be a number")
		}
		if n != 1 && sc.periodmatch != "distance" {
			return sc, fmt.Errorf("Parameter repeat failed: Repeat must be 1 unless periodmatch is 'distance', not '%s'", sc.periodmatch)
		}
		sc.repeat = n
	}
	if sc.repeat < 1 {
		sc.repeat = 1
	}
	if v, ok := p["weekday"]; ok {
		sc.weekdays = map[time.Weekday]bool{}
		var days []any
		if l, isList := v.([]any); isList {
			days = l
		} else {
			days = []any{v}
		}
		for _, d := range days {
			wd, ok := weekday(d)
			if !ok {
				return sc, fmt.Errorf("Parameter weekday failed: %v is not a valid day of the week", d)
			}
			sc.weekdays[wd] = true
		}
	}
	return sc, nil
}

// rangeValue is what Puppet's schedule accepts as a range (unanchored,
// as Puppet's).
var rangeValue = regexp.MustCompile(`\d+(:\d+){0,2}\s*-\s*\d+(:\d+){0,2}`)

var rangeSep = regexp.MustCompile(`\s*-\s*`)

// munge turns "H[:M[:S]] - H[:M[:S]]" into seconds from midnight, as
// Puppet's munge reads it (Ruby's to_i on each part).
func munge(r string) ([2]int, error) {
	parts := rangeSep.Split(r, -1)
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1] // Ruby's split drops trailing empties
	}
	if len(parts) != 2 {
		return [2]int{}, fmt.Errorf("Invalid range %s", r)
	}
	var hms [2][3]int
	for i, part := range parts {
		for j, n := range strings.Split(part, ":") {
			if j < 3 {
				hms[i][j] = rubyToI(n)
			}
		}
	}
	for i := range hms {
		if h := hms[i][0]; h < 0 || h > 23 {
			return [2]int{}, fmt.Errorf("Invalid hour '%d'", h)
		}
	}
	for i := range hms {
		if m := hms[i][1]; m < 0 || m > 59 {
			return [2]int{}, fmt.Errorf("Invalid minute '%d'", m)
		}
	}
	return [2]int{hms[0][0]*3600 + hms[0][1]*60 + hms[0][2], hms[1][0]*3600 + hms[1][1]*60 + hms[1][2]}, nil
}

// rubyToI is Ruby's String#to_i: leading blanks, a sign, digits; 0 when none.
func rubyToI(s string) int {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
		if n > 1<<30 {
			break
		}
	}
	if neg {
		return -n
	}
	return n
}

// rubyInspect writes a string or a list of strings as Ruby's inspect does.
func rubyInspect(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = rubyInspect(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprint(v)
}

// stringsOrScalar is a parameter's values as text.
func stringsOrScalar(v any) []string {
	if l, ok := v.([]any); ok {
		out := make([]string, len(l))
		for i, e := range l {
			out[i] = fmt.Sprint(e)
		}
		return out
	}
	return []string{fmt.Sprint(v)}
}

// scheduleInt is repeat's value: an integer, or a string of digits.
func scheduleInt(v any) (int, bool) {
	switch x := v.(type) {
	case int64:
		return int(x), true
	case int:
		return x, true
	case string:
		if x == "" || strings.Trim(x, "0123456789") != "" || len(x) > 9 {
			return 0, false
		}
		n, err := strconv.Atoi(x)
		return n, err == nil
	}
	return 0, false
}

// weekdayName is what Puppet's schedule accepts as a day's name.
var weekdayName = regexp.MustCompile(`(?i)^(Mon|Tues?|Wed(?:nes)?|Thu(?:rs)?|Fri|Sat(?:ur)?|Sun)(day)?$`)

// weekday reads a day as Puppet's schedule does: 0 to 6 (0 is Sunday),
// as a number or a string, or a name ("Tue", "Tues", "Tuesday").
func weekday(v any) (time.Weekday, bool) {
	switch x := v.(type) {
	case int64:
		if x >= 0 && x <= 6 {
			return time.Weekday(x), true
		}
		return 0, false
	case string:
		if len(x) == 1 && x[0] >= '0' && x[0] <= '6' {
			return time.Weekday(x[0] - '0'), true
		}
		if !weekdayName.MatchString(x) {
			return 0, false
		}
		three := strings.ToLower(x[:3])
		for d := time.Sunday; d <= time.Saturday; d++ {
			if strings.ToLower(d.String()[:3]) == three {
				return d, true
			}
		}
	}
	return 0, false
}

// checkSchedules refuses a catalog whose schedules Puppet would refuse
// (one it cannot parse: "Parameter range failed on Schedule[x]: ...")
// or whose resource names a schedule it lacks ("Could not find schedule
// x"): Puppet applies nothing of such a catalog.
func checkSchedules(c *Catalog) error {
	names := map[string]bool{}
	for k := range defaultSchedules {
		names[k] = true
	}
	for _, r := range c.Resources {
		if !strings.EqualFold(r.Type, "schedule") || r.Exported {
			continue
		}
		if _, err := parseSchedule(r.Params); err != nil {
			// "Parameter P failed: M" becomes Puppet's "Parameter P failed on Schedule[x]: M (line: N)".
			msg := err.Error()
			if head, rest, ok := strings.Cut(msg, " failed: "); ok {
				msg = head + " failed on " + r.Ref() + ": " + rest
			}
			return errors.New(msg + errorLocationWithSpace(r.File, r.Line))
		}
		names[r.Title] = true
	}
	for _, r := range c.Resources {
		if r.Exported || r.IsContainer() {
			continue
		}
		if name, ok := r.Params["schedule"]; ok {
			if s := fmt.Sprint(name); !names[s] {
				return fmt.Errorf("Could not find schedule %s", s)
			}
		}
	}
	return nil
}

// errorLocation is Puppet's "(file: F, line: L)", or the part known
// ("" when neither is).
func errorLocation(file string, line int) string {
	switch {
	case file != "" && line > 0:
		return fmt.Sprintf("(file: %s, line: %d)", file, line)
	case line > 0:
		return fmt.Sprintf("(line: %d)", line)
	case file != "":
		return fmt.Sprintf("(file: %s)", file)
	}
	return ""
}

// errorLocationWithSpace is errorLocation after a space, or "".
func errorLocationWithSpace(file string, line int) string {
	if l := errorLocation(file, line); l != "" {
		return " " + l
	}
	return ""
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
