// Package cron is the `cron` type: one job of a user's crontab, installed
// through crontab(1) as Puppet's crontab provider (puppetlabs-cron_core)
// installs it.
//
// A job is identified by the `# Puppet Name: NAME` comment line above it;
// the environment lines between that comment and the job belong to it.
// Lines of the crontab no resource names (other jobs, comments, variables)
// are kept where they are. A job without a name comment whose command and
// schedule are those a resource asks for is taken as that resource's, as
// Puppet takes it (and, as in Puppet, it is not given a name comment).
//
// The type is data: each time field (minute, hour, monthday, month,
// weekday) takes a value or a list of values, each a number in range, a
// name (weekdays and months, in full or their first three letters, which
// become numbers), a range `1-5`, a step `*/10` or `1-10/2`, or `*`/`absent`
// for every value; `special` (`reboot`, `daily`, ...) replaces them all.
// A field the request does not give is left as it is.
//
// The one provider, crontab, is the shared parsedfile record provider with
// this type's record format (a job with its name comment and variables)
// and crontab(1) for target. It reads a user's crontab once and keeps it
// parsed, with an index of its jobs by name, in the Env's cache while the
// spool file
// (/var/spool/cron/crontabs/USER on Debian) keeps its identity, so an
// unchanged job costs a stat. Reading the spool file directly gives what
// `crontab -l` prints (Debian's crontab(1) leaves out the three header
// lines it writes there); where the spool file can't be read, `crontab -l`
// is run instead. A change writes the whole crontab, as Puppet writes it
// (its four-line header, then every line), through `crontab -u USER -`,
// which installs it atomically.
package cron

import (
	"errors"
	"fmt"
	"math"
	"os/user"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/types/internal/parsedfile"
)

// timeField is one of the five schedule fields.
type timeField struct {
	name   string
	lo, hi int
	names  []string // for weekday and month: names[i] is the value i ("" none)
	doc    string
}

var timeFields = []timeField{
	{name: "minute", lo: 0, hi: 59, doc: "The minute at which to run the job (0-59)."},
	{name: "hour", lo: 0, hi: 23, doc: "The hour at which to run the job (0-23)."},
	{name: "weekday", lo: 0, hi: 7, names: []string{"sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"},
		doc: "The weekday on which to run the job: 0-7 (0 and 7 are Sunday) or a day's name (`Tuesday`, `tue`). Ranges must be numeric (`1-5`)."},
	{name: "month", lo: 1, hi: 12, names: []string{"", "january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"},
		doc: "The month in which to run the job: 1-12 or a month's name (`December`, `dec`)."},
	{name: "monthday", lo: 1, hi: 31, doc: "The day of the month on which to run the job (1-31)."},
}

// fieldOrder is the order of the fields on a crontab line.
var fieldOrder = []string{"minute", "hour", "monthday", "month", "weekday"}

var specials = []string{"reboot", "yearly", "annually", "monthly", "weekly", "daily", "midnight", "hourly", "absent"}

var envRe = regexp.MustCompile(`^\s*(\w+)\s*=\s*(.*)\s*$`)

// digits returns the end of the run of digits at s[i:] (i when none).
func digits(s string, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// isRangeOrStep: `*/N`, `N-M` or `N-M/S` (Puppet's CronParam patterns,
// written out: this runs for every field of every request).
func isRangeOrStep(s string) bool {
	if strings.HasPrefix(s, "*/") {
		return len(s) > 2 && digits(s, 2) == len(s)
	}
	i := digits(s, 0)
	if i == 0 || i == len(s) || s[i] != '-' {
		return false
	}
	j := digits(s, i+1)
	if j == i+1 {
		return false
	}
	if j == len(s) {
		return true
	}
	return s[j] == '/' && j+1 < len(s) && digits(s, j+1) == len(s)
}

// maxStep is the largest step cron reads (it parses the number into a C
// int); a larger one makes crontab refuse the whole file.
const maxStep = math.MaxInt32

// checkRangeOrStep bounds the numbers of a range or step that Puppet lets
// through unchecked and crontab would refuse (the whole file with it): a
// range's ends within the field's bounds, a step from 1 to maxStep.
func (f timeField) checkRangeOrStep(s string) error {
	rng, step, hasStep := strings.Cut(s, "/")
	if hasStep {
		if n, err := strconv.ParseInt(step, 10, 64); err != nil || n < 1 || n > maxStep {
			return fmt.Errorf("%s is not a valid %s: the step %s is out of range (1 to %d)", s, f.name, step, maxStep)
		}
	}
	if rng == "*" {
		return nil
	}
	lo, hi, _ := strings.Cut(rng, "-")
	for _, e := range []string{lo, hi} {
		if n, err := strconv.ParseInt(e, 10, 64); err != nil || n < int64(f.lo) || n > int64(f.hi) {
			return fmt.Errorf("%s is not a valid %s: %s is out of range (%d to %d)", s, f.name, e, f.lo, f.hi)
		}
	}
	return nil
}

// validUserName: letters, digits, `_`, `.`, `-` (not first), an
// optional final `$`, as useradd(8) allows by default.
func validUserName(s string) bool {
	if s == "" || s[0] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '.', c == '-':
		case c == '$' && i == len(s)-1:
		default:
			return false
		}
	}
	return true
}

// munge returns a time field's munging: Puppet's CronParam rules.
func (f timeField) munge(v any) (any, error) {
	s, _ := v.(string)
	switch {
	case s == "absent" || s == "*":
		return "absent", nil
	case isRangeOrStep(s):
		if err := f.checkRangeOrStep(s); err != nil {
			return nil, err
		}
		return s, nil
	case s != "" && digits(s, 0) == len(s):
		n := 0
		for _, c := range s {
			if n = n*10 + int(c-'0'); n > 1000 {
				break
			}
		}
		if n >= f.lo && n <= f.hi {
			return s, nil
		}
	case f.names != nil:
		l := strings.ToLower(s)
		for i, name := range f.names {
			if name != "" && (len(l) == 3 && strings.HasPrefix(name, l) || l == name) {
				return fmt.Sprint(i), nil
			}
		}
	}
	return nil, fmt.Errorf("%s is not a valid %s", s, f.name)
}

func noLineBreak(what string) func(v any) error {
	lineBreak := parsedfile.Refuse("\r\n", what+" must not contain a line break")
	// crontab refuses a whole crontab holding a NUL: refused here, naming
	// the attribute, before anything is read or written.
	nul := parsedfile.Refuse("\x00", what+" must not contain a NUL byte")
	return func(v any) error {
		if err := lineBreak(v); err != nil {
			return err
		}
		return nul(v)
	}
}

func validateEnv(v any) error {
	s, _ := v.(string)
	if s == "absent" || envRe.MatchString(s) && !strings.ContainsAny(s, "\r\n\x00") {
		return nil
	}
	return fmt.Errorf("Invalid environment setting %q", s)
}

func validateUser(v any) error {
	if s, _ := v.(string); !validUserName(s) {
		return fmt.Errorf("Invalid user name %q", s)
	}
	return nil
}

// currentUser is the account the receiver runs as (root), Puppet's
// default crontab.
var currentUser = sync.OnceValue(func() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return "root"
})

// fieldList renders a time field's value as the list written: nil for
// absent (every value).
func fieldList(v any) []string {
	if l := applier.StringList(v); len(l) != 1 || l[0] != "absent" {
		return l
	}
	return nil
}

// fieldInSync compares in order, as Puppet compares the lists' text.
func fieldInSync(is, should any) bool { return slices.Equal(fieldList(is), fieldList(should)) }

// envInSync compares the variables as sets (Puppet sorts both lists).
func envInSync(is, should any) bool {
	a, b := slices.Clone(fieldList(is)), slices.Clone(fieldList(should))
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func attrs() []*applier.Attr {
	as := []*applier.Attr{
		parsedfile.Ensure("Whether the job should be in the crontab. Defaults to `present` when any other property is given."),
		{
			Name: "command", Behaviour: applier.Property, Kind: applier.KindString,
			Munge:    func(v any) (any, error) { s, _ := v.(string); return strings.TrimSpace(s), nil },
			Validate: noLineBreak("Command"),
			Doc: "The command to run, with surrounding whitespace removed. Required to create the job. " +
				"Its environment is cron's, not the user's login environment: give full paths.",
		},
		{
			Name: "special", Behaviour: applier.Property, Kind: applier.KindEnum, Values: specials,
			Doc: "A special schedule instead of the time fields: " + strings.Join(specials[:len(specials)-1], ", ") +
				". `absent` returns to the time fields.",
		},
	}
	for _, f := range timeFields {
		as = append(as, &applier.Attr{
			Name: f.name, Behaviour: applier.Property, Kind: applier.KindString, Array: true,
			Munge: f.munge, InSync: fieldInSync,
			Doc: f.doc + " A list runs it at each; ranges (`1-5`) and steps (`*/10`, `1-10/2`) are " +
				"written as given; `*` or `absent` means every value. Not given: left as it is.",
		})
	}
	return append(as,
		&applier.Attr{
			Name: "environment", Behaviour: applier.Property, Kind: applier.KindString, Array: true,
			Validate: validateEnv, InSync: envInSync,
			Doc: "Variable settings written on the lines just above the job, such as `PATH=/bin:/usr/bin` " +
				"(compared as a set). `absent` removes them.",
		},
		&applier.Attr{
			Name: "name", Behaviour: applier.Namevar, Kind: applier.KindString,
			Validate: noLineBreak("Name"),
			Doc:      "The job's name, written in the `# Puppet Name:` comment above it (namevar).",
		},
		&applier.Attr{
			Name: "user", Behaviour: applier.Property, Kind: applier.KindString, Validate: validateUser,
			Doc: "The user whose crontab holds the job (default: the receiver's user, root). It must exist to create the job.",
		},
		&applier.Attr{
			Name: "target", Behaviour: applier.Property, Kind: applier.KindString, Validate: validateUser,
			DefaultFunc: func(r *applier.Resource) any {
				if u := r.String("user"); u != "" {
					return u
				}
				return currentUser()
			},
			Doc: "The crontab, named by its user; defaults to `user`. The same as `user` for this " +
				"provider: giving both with different values is an error.",
		},
	)
}

// Type is the cron type's declaration.
var Type = &applier.Type{
	Name: "cron",
	// Puppet's autorequire: the user whose crontab holds the job.
	Auto: []applier.AutoRel{{Type: "user", Attr: "user", Titles: applier.Names}},
	Doc: "Installs and manages cron jobs: one job of a user's crontab, identified by the " +
		"`# Puppet Name:` comment above it. Lines the crontab holds that no request names are kept.",
	Attrs:     attrs(),
	Validate:  validate,
	Providers: []*applier.ProviderSpec{Crontab},
}

func init() { applier.Register(Type) }

func validate(r *applier.Resource) error {
	// A list of just absent is absent, as Puppet reads it.
	for _, name := range []string{"minute", "hour", "weekday", "month", "monthday", "environment"} {
		if v, ok := r.Get(name); ok && fieldList(v) == nil {
			if _, isList := v.([]any); isList {
				r.SetGiven(name, "absent")
			}
		}
	}
	if s := r.String("special"); s != "" && s != "absent" {
		for _, name := range []string{"minute", "hour", "weekday", "monthday", "month"} {
			if v, ok := r.Get(name); ok && fieldList(v) != nil {
				return fmt.Errorf("%s cannot specify both a special schedule and a value for %s", r.Ref(), name)
			}
		}
	}
	if u, t := r.String("user"), r.String("target"); u != "" && r.Given("target") && u != t {
		return errors.New("user and target name different crontabs; give one of them")
	}
	return nil
}
