package ini_subsetting

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// settingValue is a setting's value split into items, as the module's
// Puppet::Util::SettingValue splits it.
type settingValue struct {
	items          []string
	sep, quote, kv string
}

func parseValue(v string, ok bool, sep, quote, kv string) *settingValue {
	s := &settingValue{sep: sep, quote: quote, kv: kv}
	if !ok {
		return s
	}
	q := ""
	if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
		q = v[:1]
		v = v[1 : len(v)-1]
	}
	if q != "" {
		s.quote = q
	}
	// Items are the runs of characters that are not in the separator; a
	// dot always belongs to an item (the module's expression matches an
	// escaped dot either way).
	start := -1
	for i, r := range v {
		isSep := r != '.' && strings.ContainsRune(sep, r)
		if !isSep && start < 0 {
			start = i
		}
		if isSep && start >= 0 {
			s.items = append(s.items, strings.TrimSpace(v[start:i]))
			start = -1
		}
	}
	if start >= 0 {
		s.items = append(s.items, strings.TrimSpace(v[start:]))
	}
	return s
}

// String is the value written back: the items joined, quoted.
func (s *settingValue) String() string {
	return s.quote + strings.Join(s.items, s.sep) + s.quote
}

func (s *settingValue) matches(item, sub string, exact bool) bool {
	if exact {
		return item == sub
	}
	return strings.HasPrefix(item, sub+s.kv)
}

func (s *settingValue) find(sub string, exact bool) int {
	for i, it := range s.items {
		if s.matches(it, sub, exact) {
			return i
		}
	}
	return -1
}

// subValue is the subsetting's value: its first item's text after the
// name and separator (counted in characters, as Ruby slices).
func (s *settingValue) subValue(sub string) (string, bool) {
	i := s.find(sub, false)
	if i < 0 {
		return "", false
	}
	item := s.items[i]
	n := utf8.RuneCountInString(sub) + utf8.RuneCountInString(s.kv)
	for j := range item {
		if n == 0 {
			return item[j:], true
		}
		n--
	}
	return "", true
}

func (s *settingValue) add(sub, value string, exact bool, insertType, insertValue string) error {
	item := sub + s.kv + value
	if s.find(sub, exact) >= 0 {
		for i, it := range s.items {
			if s.matches(it, sub, exact) {
				s.items[i] = item
			}
		}
		return nil
	}
	at := len(s.items)
	switch insertType {
	case "start":
		at = 0
	case "before":
		if i := s.find(insertValue, exact); i >= 0 {
			at = i
		}
	case "after":
		if i := s.find(insertValue, exact); i >= 0 {
			at = i + 1
		}
	case "index":
		n := rubyToI(insertValue)
		if n > len(s.items) {
			n = len(s.items)
		}
		if n < 0 {
			n += len(s.items) + 1
			if n < 0 {
				return fmt.Errorf("index %d too small for the %d subsettings", rubyToI(insertValue), len(s.items))
			}
		}
		at = n
	}
	s.items = slices.Insert(s.items, at, item)
	return nil
}

func (s *settingValue) remove(sub string, exact bool) {
	s.items = slices.DeleteFunc(s.items, func(it string) bool { return s.matches(it, sub, exact) })
}

// rubyToI is Ruby's String#to_i: an optional sign and the leading digits.
func rubyToI(v string) int {
	v = strings.TrimSpace(v)
	n := 0
	if n < len(v) && (v[n] == '-' || v[n] == '+') {
		n++
	}
	for n < len(v) && v[n] >= '0' && v[n] <= '9' {
		n++
	}
	i, _ := strconv.Atoi(v[:n])
	return i
}
