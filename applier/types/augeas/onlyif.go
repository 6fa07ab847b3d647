package augeas

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
)

// onlyif evaluates the onlyif filter as augeas_core does: its first
// command only; get, values and match decide, any other command lets the
// changes run.
func (p *provider) onlyif(ctx context.Context, filter string) (bool, error) {
	cmds, err := parseCommands([]string{filter}, p.context())
	if err != nil {
		return false, err
	}
	if len(cmds) == 0 {
		return true, nil
	}
	c := cmds[0]
	switch c.Name {
	case "get", "values", "match":
	default:
		return true, nil
	}
	s := newScript()
	if _, err := p.open(s); err != nil {
		return false, err
	}
	l, err := line("dump-xml", c.Args[0])
	if err != nil {
		return false, fmt.Errorf("Error sending command '%s' with params %s/%w", c.Name, c.params(), err)
	}
	q := s.add(l)
	steps, err := s.run(ctx, p.argv())
	if err != nil {
		return false, err
	}
	fail := func(msg string) error {
		return fmt.Errorf("Error sending command '%s' with params %s/%s", c.Name, c.params(), msg)
	}
	if e := steps[q].Err; e != "" {
		return false, fail(errText(e))
	}
	ns, err := nodes(steps[q].Out)
	if err != nil {
		return false, fail(err.Error())
	}
	var ok bool
	switch c.Name {
	case "get":
		ok, err = onlyifGet(ns, c.Args[1], c.Args[2])
	case "values":
		vals := make([]*string, len(ns))
		for i, n := range ns {
			vals[i] = n.Value
		}
		ok, err = onlyifList(vals, c.Args[1], false, p.context())
	case "match":
		paths := make([]*string, len(ns))
		for i := range ns {
			paths[i] = &ns[i].Path
		}
		ok, err = onlyifList(paths, c.Args[1], true, p.context())
	}
	if err != nil {
		return false, fail(err.Error())
	}
	if !ok {
		p.env.Logger().Debug("/" + p.r.Ref() + ": onlyif '" + filter + "' is false: not running")
	}
	return ok, nil
}

// numeric is Ruby's test the module applies before comparing as numbers.
var numeric = regexp.MustCompile(`\A[+-]?\d+?(\.\d+)?\n?\z`)

// onlyifGet compares the one node's value (a missing node or one without
// a value reads as "") with arg.
func onlyifGet(ns []node, cmp, arg string) (bool, error) {
	// Several nodes read as no value, as ruby-augeas's get answers nil.
	v := ""
	if len(ns) == 1 && ns[0].Value != nil {
		v = *ns[0].Value
	}
	switch cmp {
	case "<", "<=", ">=", ">":
		if numeric.MatchString(v) && numeric.MatchString(arg) {
			a, _ := strconv.ParseFloat(v, 64)
			b, _ := strconv.ParseFloat(arg, 64)
			return compare(a, b, cmp), nil
		}
		return compareStrings(v, arg, cmp), nil
	case "!=":
		return v != arg, nil
	case "=~":
		re, err := regexp.Compile(arg)
		if err != nil {
			return false, err
		}
		return re.MatchString(v), nil
	}
	return v == arg, nil
}

func compare[T int | float64](a, b T, cmp string) bool {
	switch cmp {
	case "<":
		return a < b
	case "<=":
		return a <= b
	case ">=":
		return a >= b
	case ">":
		return a > b
	case "==":
		return a == b
	case "!=":
		return a != b
	}
	return false
}

func compareStrings(a, b, cmp string) bool {
	switch cmp {
	case "<":
		return a < b
	case "<=":
		return a <= b
	case ">=":
		return a >= b
	case ">":
		return a > b
	}
	return a == b
}

// onlyifList applies a values or match clause (include, not_include, ==,
// != and, for match, size) to the list (nil: a node without a value).
func onlyifList(list []*string, clause string, isMatch bool, context string) (bool, error) {
	cs, err := parseCommands([]string{clause}, context)
	if err != nil {
		return false, err
	}
	if len(cs) == 0 {
		return false, nil
	}
	c := cs[0]
	has := func(s string) bool {
		return slices.ContainsFunc(list, func(v *string) bool { return v != nil && *v == s })
	}
	equal := func(arr []string) bool {
		if len(arr) != len(list) {
			return false
		}
		for i, v := range list {
			if v == nil || *v != arr[i] {
				return false
			}
		}
		return true
	}
	switch c.Name {
	case "size":
		if !isMatch {
			return false, nil
		}
		n, _ := strconv.Atoi(c.Args[1])
		if c.Args[0] == "=~" {
			return false, nil
		}
		return compare(len(list), n, c.Args[0]), nil
	case "include":
		return has(c.Args[0]), nil
	case "not_include":
		return !has(c.Args[0]), nil
	case "==", "!=":
		arr, err := parseArray(c.Args[0])
		if err != nil {
			return false, fmt.Errorf("Invalid array in command: %s", clause)
		}
		return equal(arr) == (c.Name == "=="), nil
	}
	return false, nil
}
