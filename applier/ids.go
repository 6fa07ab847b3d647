package applier

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// MaxID is the largest user or group id: ids are 32 bits, and
// 4294967295 is (uid_t)-1, which chown(2) and setuid(2) take as "leave
// unchanged".
const MaxID = 1<<32 - 2

// Range is the inclusive range of an attribute's numeric values.
type Range struct {
	Min, Max int64
	// What names the value in the error ("id", "timeout"); "" says "value".
	What string
}

// IDRange is the range of a user or group id.
var IDRange = &Range{Min: 0, Max: MaxID, What: "id"}

// NonNegative is the range of a count or size: 0 or more.
var NonNegative = &Range{Min: 0, Max: math.MaxInt64}

// MaxSeconds is the longest duration in whole seconds that time.Duration
// holds (about 292 years): a timeout or sleep beyond it would overflow.
const MaxSeconds = math.MaxInt64 / int64(time.Second)

// String is the range as `receiver describe` and errors show it.
func (g *Range) String() string {
	switch {
	case g.Max == math.MaxInt64:
		return fmt.Sprintf("%d or more", g.Min)
	}
	return fmt.Sprintf("%d to %d", g.Min, g.Max)
}

// Check is nil when v is within the range or not a number; otherwise an
// error such as "id 4294967296 is out of range (0 to 4294967294)".
func (g *Range) Check(v any) error {
	what := g.What
	if what == "" {
		what = "value"
	}
	out := func(s string) error { return fmt.Errorf("%s %s is out of range (%s)", what, s, g) }
	switch x := v.(type) {
	case int64:
		if x < g.Min || x > g.Max {
			return out(strconv.FormatInt(x, 10))
		}
	case float64:
		if math.IsNaN(x) || x < float64(g.Min) || x > float64(g.Max) {
			f := byte('f')
			if math.Abs(x) >= 1e21 {
				f = 'g'
			}
			return out(strconv.FormatFloat(x, f, -1, 64))
		}
	case string:
		t := strings.TrimPrefix(strings.TrimPrefix(x, "-"), "+")
		if t == "" || strings.Trim(t, "0123456789") != "" {
			return nil
		}
		n, err := strconv.ParseInt(x, 10, 64)
		if err != nil || n < g.Min || n > g.Max {
			return out(x)
		}
	}
	return nil
}

// ParseID reads a numeric user or group id: ok false when s is not a
// number at all (a name), an error when it is one outside 0..MaxID.
func ParseID(s string) (id int, ok bool, err error) {
	if s == "" {
		return 0, false, nil
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false, nil
		}
	}
	n, perr := strconv.ParseUint(s, 10, 64)
	if perr != nil || n > MaxID {
		return 0, true, fmt.Errorf("id %s is out of range (0 to %d)", s, uint64(MaxID))
	}
	return int(n), true, nil
}

// ValidID is an Attr.Validate for a user or group given by name or id:
// a number outside the id range is an error (never truncated, never
// taken as "unchanged"); what names the attribute in the message.
func ValidID(what string) func(any) error {
	return func(v any) error {
		s, _ := v.(string)
		if _, _, err := ParseID(s); err != nil {
			return fmt.Errorf("invalid %s: %w", what, err)
		}
		return nil
	}
}
