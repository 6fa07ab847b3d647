package mount

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/command"
	"github.com/pippet/pippet/applier/types/internal/parsedfile"
)

// Parsed is the provider that edits the mount table and runs mount(8).
var Parsed = &applier.ProviderSpec{
	Name:      "parsed",
	Doc:       "Edits the mount table line by line (Puppet's ParsedFile format of puppetlabs-mount_core) and mounts with mount(8).",
	Confine:   applier.Confine{Commands: []string{"mount", "umount"}},
	New:       newParsed,
	Instances: instances,
}

// Fields of a Linux fstab line, in order.
const (
	fDevice = iota
	fName
	fFstype
	fOptions
	fDump
	fPass
	nFields
)

// fieldAttr names the attribute each field holds.
var fieldAttr = [nFields]string{"device", "name", "fstype", "options", "dump", "pass"}

// record is one fstab line; "" is an absent field.
type record [nFields]string

const spaceChars = " \t\n\v\f\r"

func parseLine(line string) (record, bool) {
	t := strings.TrimLeft(line, spaceChars)
	if t == "" || t[0] == '#' {
		return record{}, false
	}
	words := strings.FieldsFunc(t, func(r rune) bool { return strings.ContainsRune(spaceChars, r) })
	if len(words) < 2 {
		// fstab ignores lines with fewer columns than the mandatory ones.
		return record{}, false
	}
	var r record
	copy(r[:], words)
	if len(words) > nFields {
		// Puppet rolls surplus columns into the last field.
		r[fPass] = strings.Join(words[fPass:], "\t")
	}
	r[fDevice] = strings.ReplaceAll(r[fDevice], `\040`, " ")
	r[fName] = strings.ReplaceAll(r[fName], `\040`, " ")
	// Trailing slashes dropped, as the name attribute is munged.
	if n := strings.TrimRight(r[fName], "/"); n != "" {
		r[fName] = n
	} else {
		r[fName] = "/"
	}
	return r, true
}

func renderLine(r record) (string, error) {
	r[fDevice] = strings.ReplaceAll(r[fDevice], " ", `\040`)
	r[fName] = strings.ReplaceAll(r[fName], " ", `\040`)
	return strings.Join(r[:], "\t"), nil
}

// Format is the Linux fstab format: a mount's line is the last of its mount point.
var Format = &parsedfile.Format[record]{Name: "mount", Parse: parsedfile.OrText(parseLine), Render: renderLine,
	Key: func(r record) string { return r[fName] }}

type parsed struct {
	r *applier.Resource
	parsedfile.Entry[record]
	state string // absent, ghost, unmounted, mounted
	// changed: the line changed while mounted; refresh with a remount.
	changed bool
	// justMounted: this run mounted it; no remount needed.
	justMounted bool
	// mountsFile lists what is mounted; tests may point it elsewhere.
	mountsFile string
}

func newParsed(r *applier.Resource, env *applier.Env) (applier.Provider, error) {
	p := &parsed{r: r, mountsFile: "/proc/self/mounts"}
	p.Entry = parsedfile.Entry[record]{Format: Format, Target: parsedfile.FileTarget(r, DefaultTarget), Env: env, Key: r.Name()}
	return p, nil
}

func (p *parsed) mounted() bool { return p.state == "mounted" || p.state == "ghost" }

// Get reads the table and what is mounted.
func (p *parsed) Get(ctx context.Context, cur *applier.State) error {
	rec, err := p.Load(ctx)
	if err != nil {
		return err
	}
	isMounted, err := p.isMounted(ctx, p.r.Name())
	if err != nil {
		return err
	}
	switch {
	case rec == nil && isMounted:
		p.state = "ghost"
	case rec == nil:
		p.state = "absent"
	case isMounted:
		p.state = "mounted"
	default:
		p.state = "unmounted"
	}
	cur.Set("ensure", p.state)
	if rec == nil {
		if p.state == "ghost" {
			// Looked for in that table, as Puppet reports it: a request
			// on a ghost that leaves ensure alone is in sync there.
			cur.Set("target", p.Target.Path)
		}
		return nil
	}
	report(cur, rec, p.Target.Path)
	// Linux tables have no such columns: whatever is asked is in sync,
	// as Puppet reports the desired value for a field its format lacks.
	for _, a := range []string{"atboot", "blockdevice"} {
		if v, ok := p.r.Get(a); ok {
			cur.Set(a, v)
		}
	}
	return nil
}

// report is the state of an entry of the table but its ensure.
func report(cur *applier.State, rec *record, target string) {
	for i, v := range rec {
		if i != fName && v != "" {
			cur.Set(fieldAttr[i], v)
		}
	}
	cur.Set("target", target)
}

// instances lists, as Puppet's provider does, the entries of the
// search's table (mounted or unmounted; of two lines of one mount point
// the last, which Get finds) in table order, then what is mounted and in
// no line (ghost), in the kernel's order.
func instances(ctx context.Context, env *applier.Env, scope *applier.Resource, add func(string) *applier.State) error {
	t := parsedfile.FileTarget(scope, DefaultTarget)
	rs, err := Format.Read(ctx, &t, env.Cache)
	if err != nil {
		return err
	}
	mounted := map[string]bool{}
	var order []string
	if err := mountedDirs(ctx, "/proc/self/mounts", func(d string) bool {
		if !mounted[d] {
			mounted[d] = true
			order = append(order, d)
		}
		return true
	}); err != nil {
		return err
	}
	rs.Each(func(_ int, rec *record, bound bool) {
		if !bound {
			return
		}
		cur := add(rec[fName])
		if mounted[rec[fName]] {
			cur.Set("ensure", "mounted")
		} else {
			cur.Set("ensure", "unmounted")
		}
		report(cur, rec, t.Path)
	})
	for _, d := range order {
		if rs.Find(d) >= 0 {
			continue
		}
		cur := add(d)
		cur.Set("ensure", "ghost")
		cur.Set("target", t.Path)
	}
	return nil
}

// Set moves ensure (writing the table first where mount(8) must read it)
// or changes one column; Flush writes what is left and remounts.
func (p *parsed) Set(ctx context.Context, c *applier.Change) error {
	if c.Property == "ensure" {
		c.Message = changeMessage(c.Is, c.Should)
		return p.setEnsure(ctx, fmt.Sprint(c.Should))
	}
	switch c.Property {
	case "atboot", "blockdevice":
		return nil // not in a Linux table; never out of sync
	case "target":
		return fmt.Errorf("cannot move %s to another table", p.r.Ref())
	}
	for i, a := range fieldAttr {
		if a == c.Property && i != fName {
			p.changed = true
			return p.Update(ctx, p.r.Ref(), func(rec *record) error {
				rec[i] = applier.FormatValue(c.Should)
				return nil
			})
		}
	}
	return fmt.Errorf("cannot change %s", c.Property)
}

// changeMessage is Puppet's wording for mount's ensure, an ordinary property.
func changeMessage(is, should any) string {
	switch {
	case is == nil || is == "absent":
		return fmt.Sprintf("defined 'ensure' as '%v'", should)
	case should == "absent":
		return fmt.Sprintf("undefined 'ensure' from '%v'", is)
	default:
		return fmt.Sprintf("ensure changed '%v' to '%v'", is, should)
	}
}

func (p *parsed) setEnsure(ctx context.Context, should string) error {
	switch should {
	case "defined":
		if p.Record() == nil {
			if err := p.create(ctx); err != nil {
				return err
			}
			if p.state == "ghost" {
				// Mounted already: Puppet's refresh remounts it.
				p.changed = true
			}
		}
	case "unmounted":
		switch p.state {
		case "ghost":
			if err := p.create(ctx); err != nil {
				return err
			}
			if err := p.Entry.Flush(ctx); err != nil {
				return err
			}
			return p.unmount(ctx)
		case "absent":
			return p.create(ctx)
		case "mounted":
			if err := p.unmount(ctx); err != nil {
				return err
			}
			return p.syncOthers(ctx)
		}
	case "absent":
		if p.mounted() {
			if err := p.unmount(ctx); err != nil {
				return err
			}
		}
		if err := p.Delete(ctx); err != nil {
			return err
		}
		p.state = "absent"
	case "mounted":
		wasMounted := p.mounted()
		var err error
		if p.Record() == nil {
			err = p.create(ctx)
		} else {
			err = p.syncOthers(ctx)
		}
		if err != nil {
			return err
		}
		if err := p.Entry.Flush(ctx); err != nil {
			return err
		}
		if !wasMounted {
			if err := p.mountCmd(ctx, p.r.Name()); err != nil {
				return err
			}
			p.justMounted = true
		}
		p.state = "mounted"
	default:
		return fmt.Errorf("invalid ensure %q", should)
	}
	return nil
}

// create adds the resource's line: device and fstype required, options
// `defaults` when not given (Puppet's rule on Linux).
func (p *parsed) create(ctx context.Context) error {
	var rec record
	for i, a := range fieldAttr {
		rec[i] = p.r.String(a)
	}
	rec[fName] = p.r.Name()
	if rec[fDevice] == "" {
		return errors.New("Field 'device' is required")
	}
	if rec[fFstype] == "" {
		return fmt.Errorf("%s: Field 'fstype' is required", p.r.Ref())
	}
	if rec[fOptions] == "" {
		rec[fOptions] = "defaults"
	}
	if err := p.Put(ctx, rec); err != nil {
		return err
	}
	if p.state == "ghost" {
		p.state = "mounted"
	} else {
		p.state = "unmounted"
	}
	return nil
}

// syncOthers brings every managed column to its desired value (Puppet
// does this when ensure moves between mounted and unmounted).
func (p *parsed) syncOthers(ctx context.Context) error {
	rec := *p.Record()
	for i, a := range fieldAttr {
		if v, ok := p.r.Get(a); ok && i != fName {
			rec[i] = applier.FormatValue(v)
		}
	}
	if rec == *p.Record() {
		return nil
	}
	return p.Put(ctx, rec)
}

// Flush writes the table if needed and remounts a mounted filesystem
// whose line changed (Puppet's refresh; never for swap).
func (p *parsed) Flush(ctx context.Context) error {
	if err := p.Entry.Flush(ctx); err != nil {
		return err
	}
	if !p.changed || p.justMounted || !p.mounted() || p.r.String("fstype") == "swap" {
		return nil
	}
	p.changed = false
	return p.remount(ctx)
}

// fstabArgs points mount(8) at the resource's table when it is not the default.
func (p *parsed) fstabArgs() []string {
	if p.Target.Path == DefaultTarget {
		return nil
	}
	return []string{"--fstab", p.Target.Path}
}

func (p *parsed) mountCmd(ctx context.Context, args ...string) error {
	return run(ctx, "mount", append(p.fstabArgs(), args...)...)
}

func (p *parsed) unmount(ctx context.Context) error {
	if err := run(ctx, "umount", p.r.Name()); err != nil {
		return err
	}
	if p.state == "ghost" {
		p.state = "absent"
	} else {
		p.state = "unmounted"
	}
	return nil
}

func (p *parsed) remount(ctx context.Context) error {
	if p.r.Bool("remounts") {
		return p.mountCmd(ctx, "-o", "remount", p.r.Name())
	}
	if err := p.unmount(ctx); err != nil {
		return err
	}
	if err := p.mountCmd(ctx, p.r.Name()); err != nil {
		return err
	}
	p.state = "mounted"
	return nil
}

// run executes a command through the shared runner; a failure is worded
// as Puppet words it (Execution of 'umount /mnt' returned 32: ...).
func run(ctx context.Context, name string, args ...string) error {
	_, err := command.Exec(ctx, append([]string{name}, args...)...)
	return err
}

// isMounted reports whether something is mounted on dir, from the
// kernel's mount table (or, failing that, mount(8)'s listing).
func (p *parsed) isMounted(ctx context.Context, dir string) (bool, error) {
	found := false
	err := mountedDirs(ctx, p.mountsFile, func(d string) bool {
		found = d == dir
		return !found
	})
	return found, err
}

// mountedDirs calls each with every mount point, in the order of the
// kernel's mount table (or, failing that, of mount(8)'s listing), until it
// returns false.
func mountedDirs(ctx context.Context, mountsFile string, each func(dir string) bool) error {
	data, err := os.ReadFile(mountsFile)
	if err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			fields := strings.Fields(line)
			if len(fields) >= 2 && !each(unescapeOctal(fields[1])) {
				return nil
			}
		}
		return nil
	}
	var out bytes.Buffer
	res, cerr := command.Run(ctx, &command.Cmd{Argv: []string{"mount"}, Stdout: &out})
	if cerr == nil && res.Code != 0 {
		cerr = &command.ExitError{Argv: []string{"mount"}, Code: res.Code, Output: command.LastLines(res.Output, 10)}
	}
	if cerr != nil {
		return fmt.Errorf("listing mounts: %w (and %w)", err, cerr)
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if m := mountLineRe.FindStringSubmatch(line); m != nil && !each(m[1]) {
			return nil
		}
	}
	return nil
}

var mountLineRe = regexp.MustCompile(` on (.*) type `)

// unescapeOctal decodes the kernel's \NNN escapes in /proc/self/mounts.
func unescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
