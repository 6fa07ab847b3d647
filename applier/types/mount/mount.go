// Package mount is the `mount` type: one filesystem's line in the mount
// table (/etc/fstab, or the file named by target) and, when asked, whether
// it is mounted.
//
// The type is data: Puppet's attributes with their validation and
// defaults (dump and pass default to 0 once anything is managed; options
// to `defaults` when a line is created without them). ensure has Puppet's
// five states: `defined` (alias `present`) only puts the line in the
// table and is in sync whether or not the filesystem is mounted;
// `unmounted` and `mounted` also unmount or mount it; `absent` unmounts it
// if needed and removes the line. The current state may also be `ghost`:
// mounted but not in the table.
//
// The one provider, parsed, reads the table with the shared parsedfile
// helper in the Linux format of puppetlabs-mount_core (device, mount
// point, type, options, dump, pass; spaces in the device and mount point
// written as \040), and learns what is mounted from /proc/self/mounts. It
// runs mount(8) and umount(8) only for `mounted` and `unmounted` and to
// remount a mounted filesystem whose line changed (`mount -o remount`, or
// umount and mount when remounts is false), as Puppet's refresh does.
// When the target is not /etc/fstab, mount(8) is pointed at it with
// `--fstab`, so a mount managed in another table works.
package mount

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/types/internal/parsedfile"
)

// DefaultTarget is the mount table managed when the request names none.
const DefaultTarget = "/etc/fstab"

// Type is the mount type's declaration.
var Type = &applier.Type{
	Name: "mount",
	// Puppet's autorequire: the mounts of the mount point's ancestors.
	Auto: []applier.AutoRel{{Type: "mount", Attr: "name", Titles: applier.Ancestors}},
	Doc: "Manages mounted filesystems: the filesystem's line in the mount table " +
		"(/etc/fstab) and, with ensure mounted or unmounted, whether it is mounted.",
	Attrs: []*applier.Attr{
		{
			Name: "ensure", Behaviour: applier.Property, Kind: applier.KindEnum,
			Values:  []string{"defined", "unmounted", "absent", "mounted"},
			Aliases: map[string]string{"present": "defined"},
			InSync:  ensureInSync,
			Doc: "What to do with this mount: `defined` (or `present`) puts it in the " +
				"mount table without changing whether it is mounted; `unmounted` puts it " +
				"in the table and unmounts it if mounted; `mounted` puts it in the table " +
				"and mounts it; `absent` unmounts it if needed and removes it from the table.",
		},
		{
			Name: "device", Behaviour: applier.Property, Kind: applier.KindString,
			Validate: noTabNewline("device"),
			Doc: "The device providing the mount: a device path, a network share, " +
				"UUID=... or LABEL=...; it may contain spaces. Required to create the line.",
		},
		{
			Name: "blockdevice", Behaviour: applier.Property, Kind: applier.KindString,
			Validate: noWhitespace("blockdevice"),
			Doc:      "The device to fsck. Only Solaris has it; accepted and ignored on Linux.",
		},
		{
			Name: "fstype", Behaviour: applier.Property, Kind: applier.KindString,
			Validate: word("fstype"),
			Doc:      "The filesystem type (ext4, xfs, nfs, tmpfs, swap...). Required to create the line.",
		},
		{
			Name: "options", Behaviour: applier.Property, Kind: applier.KindString,
			Validate: word("options"),
			Doc: "The mount options as one comma-separated string, as in fstab(5). A line " +
				"created without them gets `defaults`.",
		},
		{
			Name: "pass", Behaviour: applier.Property, Kind: applier.KindString,
			DefaultFunc: applier.WhenManaged("0"),
			Validate:    noWhitespace("pass"),
			Doc:         "The pass in which the filesystem is checked by fsck. Defaults to 0.",
		},
		{
			Name: "atboot", Behaviour: applier.Property, Kind: applier.KindBoolean,
			Munge: yesNo,
			Doc:   "Whether to mount at boot. Not all platforms support it; ignored on Linux.",
		},
		{
			Name: "dump", Behaviour: applier.Property, Kind: applier.KindString,
			Patterns:    []*regexp.Regexp{regexp.MustCompile(`^(0|1)$`)},
			DefaultFunc: applier.WhenManaged("0"),
			Doc:         "Whether dump(8) backs the filesystem up: 0 or 1. Defaults to 0.",
		},
		parsedfile.TargetAttr(DefaultTarget, "The mount table the line lives in. Defaults to `/etc/fstab`."),
		{
			Name: "name", Behaviour: applier.Namevar, Kind: applier.KindString,
			Munge:    trimSlashes,
			Validate: noTabNewline("name"),
			Doc: "The mount point (namevar); trailing slashes are dropped. It may " +
				"contain spaces.",
		},
		{
			Name: "remounts", Behaviour: applier.Parameter, Kind: applier.KindBoolean,
			Default: true,
			Doc: "Whether the filesystem can be remounted with `mount -o remount`; when " +
				"false it is unmounted and mounted again to apply a changed line.",
		},
	},
	Providers: []*applier.ProviderSpec{Parsed},
}

func init() { applier.Register(Type) }

// ensureInSync: defined is satisfied by a line that is mounted or not.
func ensureInSync(is, should any) bool {
	if should == "defined" && (is == "mounted" || is == "unmounted") {
		return true
	}
	return is == should
}

func yesNo(v any) (any, error) {
	if b, _ := v.(bool); b {
		return "yes", nil
	}
	return "no", nil
}

func trimSlashes(v any) (any, error) {
	s, _ := v.(string)
	if t := strings.TrimRight(s, "/"); t != "" {
		return t, nil
	}
	if s != "" {
		return "/", nil
	}
	return s, nil
}

const asciiSpace = " \t\n\v\f\r"

// noWhitespace is Puppet's check, worded as Puppet words it.
func noWhitespace(attr string) func(v any) error {
	return func(v any) error {
		if s, _ := v.(string); strings.ContainsAny(s, asciiSpace) {
			return fmt.Errorf("%s must not contain whitespace: %s", attr, s)
		}
		return nil
	}
}

// word: no whitespace, not empty (fstype, options).
func word(attr string) func(v any) error {
	ws := noWhitespace(attr)
	return func(v any) error {
		if s, _ := v.(string); s == "" {
			return fmt.Errorf("%s must not be an empty string", attr)
		}
		return ws(v)
	}
}

// noTabNewline: spaces are written as \040, but a tab or newline would
// break the line (Puppet writes it and corrupts the table).
func noTabNewline(attr string) func(v any) error {
	return func(v any) error {
		s, _ := v.(string)
		if s == "" {
			return fmt.Errorf("%s must not be an empty string", attr)
		}
		if strings.ContainsAny(s, "\t\n\v\f\r") {
			return fmt.Errorf("%s must not contain tabs or newlines: %q", attr, s)
		}
		return nil
	}
}
