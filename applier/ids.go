package applier

import (
	"fmt"
	"strconv"
)

// MaxID is the largest user or group id: ids are 32 bits, and
// 4294967295 is (uid_t)-1, which chown(2) and setuid(2) take as "leave
// unchanged".
const MaxID = 1<<32 - 2

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
