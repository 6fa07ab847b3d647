package file

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/source"
)

// Content is the munged value of `content` (and the desired state a source
// or a recursion stands for). It prints, and encodes to JSON, as its
// checksum, so file content never reaches an answer or a log through it.
type Content struct {
	// Data is the inline content.
	Data string
	// Inline: Data is the desired content (the request gave `content`).
	Inline bool
	// Kind and Sum are the checksum kind and hex digest of the desired
	// content: for inline content computed at most once per request, when
	// first needed (a message); for a source, from its metadata.
	Kind, Sum string
	// Summary replaces the checksum in messages for a recursive copy.
	Summary string

	// How the current content is compared (compare.go): settled by the
	// type's Validate for inline content, by the provider's Resolve for a
	// source; time is the source's for byNewer and byMTime.
	by   compareBy
	time time.Time
	// tree: the content of a recursive directory (its entries).
	tree bool
}

// String renders the content as {kind}digest.
func (c *Content) String() string {
	if c == nil {
		return "absent"
	}
	if c.Summary != "" {
		return c.Summary
	}
	if c.Sum == "" && c.Inline && source.IsDigest(c.Kind) {
		c.Sum = source.SumString(c.Kind, c.Data)
	}
	if c.Sum == "" {
		return "{" + c.Kind + "}"
	}
	return source.Format(c.Kind, c.Sum)
}

// Clone copies the content for a request built from a kept one
// (applier.Cloner): its checksum and comparison are worked out per request.
func (c *Content) Clone() any {
	cp := *c
	return &cp
}

// MarshalJSON encodes the checksum, never the content.
func (c *Content) MarshalJSON() ([]byte, error) {
	return []byte(fmt.Sprintf("%q", c.String())), nil
}

var anything = regexp.MustCompile(`.`)

// Type is the `file` type's declaration.
var Type = &applier.Type{
	Name: "file",
	// As Puppet's file: Sensitive content makes ensure secret too (an
	// absent file is created by ensure), and a Sensitive source its
	// content and ensure.
	SensitiveWith: map[string][]string{
		"content": {"ensure"},
		"source":  {"content", "ensure"},
	},
	// Puppet's autorequires: the nearest managed ancestor directory, a
	// link's target, the owner and the group.
	Auto: []applier.AutoRel{
		{Type: "file", Attr: "path", Titles: applier.Ancestors, First: true},
		{Type: "file", Attr: "target", Titles: applier.AbsPath},
		{Type: "user", Attr: "owner", Titles: applier.Names},
		{Type: "group", Attr: "group", Titles: applier.Names},
	},
	Doc: "Manages files, directories and symlinks: their content (inline or " +
		"from a local or HTTP(S) source), ownership and permissions. Writes " +
		"are atomic (temp file, fsync, rename); a symlink is never written " +
		"through when links is manage.",
	Attrs: []*applier.Attr{
		{Name: "path", Behaviour: applier.Namevar, Kind: applier.KindPath, Munge: mungePath,
			Doc: "The path to the file to manage. Must be fully qualified; a trailing slash is dropped."},
		{Name: "ensure", Behaviour: applier.Property, Kind: applier.KindEnum,
			Accepts:     applier.AcceptString | applier.AcceptBoolean | applier.AcceptFirstOfList,
			Values:      []string{"present", "absent", "file", "directory", "link", "fifo", "socket", "characterSpecial", "blockSpecial"},
			Patterns:    []*regexp.Regexp{anything},
			Aliases:     map[string]string{"false": "absent"},
			DefaultFunc: defaultEnsure,
			InSync:      ensureInSync,
			Doc: "Whether the file should exist and what kind: present (any kind; a " +
				"missing file is created as a plain file), absent, file, directory, or " +
				"link (needs target). fifo, socket, characterSpecial and blockSpecial " +
				"(the kinds find reports) are checks: in sync when the file is of that " +
				"kind, else the resource fails and nothing is changed (such files are " +
				"never created). Any other value is a link target (ensure: link, " +
				"target: VALUE). Without ensure, content implies file, target implies " +
				"link and source implies the kind of the source. Device nodes are never " +
				"removed or replaced."},
		{Name: "content", Behaviour: applier.Property, Kind: applier.KindAny, Munge: mungeContent, StateOnly: true,
			Accepts:     applier.AcceptString | applier.AcceptLastOfList,
			DefaultFunc: defaultContent, InSync: contentInSync,
			Doc: "The desired content, as a string. Exclusive with source and target. " +
				"Compared through the checksum kind; events and logs show only its " +
				"checksum (and a diff when show_diff is true)."},
		{Name: "source", Behaviour: applier.Parameter, Kind: applier.KindString, Array: true, Munge: mungeSource,
			Volatile: true, // validate looks for local sources
			Doc: "Where the content comes from: an absolute path, a file:// URI, an " +
				"http(s):// URL or a puppet:// URL (puppet:///MOUNT/PATH from --server, " +
				"puppet://HOST/MOUNT/PATH from HOST, through the Puppet Server's file " +
				"serving API with the agent's certificate from --ssldir); a list: the " +
				"first that exists, see sourceselect. With recurse, a source directory " +
				"is copied as a tree. HTTP metadata comes from X-Checksum-Sha256/Sha1/Md5, " +
				"Content-MD5 and Last-Modified."},
		{Name: "sourceselect", Behaviour: applier.Parameter, Kind: applier.KindEnum, Values: []string{"first", "all"}, Default: "first",
			Doc: "With several sources in a recursive copy: use the first that exists (first), or merge all of them, the earliest source winning for each path (all)."},
		{Name: "target", Behaviour: applier.Property, Kind: applier.KindString,
			Accepts: applier.AcceptString | applier.AcceptFirstOfList,
			Doc:     "The target of a link (ensure: link); may be relative. Exclusive with content and source."},
		{Name: "owner", Behaviour: applier.Property, Kind: applier.KindString,
			Accepts: applier.AcceptString | applier.AcceptInteger | applier.AcceptFirstOfList, Validate: nonEmpty("owner"), InSync: ownerInSync,
			Doc: "The user who owns the file, by name or numeric id."},
		{Name: "group", Behaviour: applier.Property, Kind: applier.KindString,
			Accepts: applier.AcceptString | applier.AcceptInteger | applier.AcceptFirstOfList, Validate: nonEmpty("group"), InSync: ownerInSync,
			Doc: "The group that owns the file, by name or numeric id."},
		{Name: "mode", Behaviour: applier.Property, Kind: applier.KindAny, Munge: mungeMode,
			Accepts: applier.AcceptScalars | applier.AcceptFirstOfList, InSync: modeInSync,
			Doc: "Permissions, as a string: octal ('0644', '755') or symbolic ('u+x,g-r', " +
				"'a=rX'; X adds search to directories and to files someone may already " +
				"execute). An unquoted number is an error. Numeric modes on directories " +
				"gain the search bit wherever read is set. New files default to 0644, " +
				"directories to 0755; a link's own mode is not managed."},
		{Name: "checksum", Behaviour: applier.Parameter, Kind: applier.KindEnum, Values: source.Kinds, Default: source.SHA256,
			Doc: "How content is compared: md5, md5lite, sha1, sha1lite, sha224, sha256, " +
				"sha256lite, sha384, sha512 (the lite kinds hash the first 512 bytes), " +
				"mtime or ctime (a source newer than the file replaces it; sources only) " +
				"or none (never compared: only creates; not with source)."},
		{Name: "checksum_value", Behaviour: applier.Parameter, Kind: applier.KindString,
			Doc: "The expected digest (hex, of the checksum kind) of the content. The " +
				"file is in sync when its digest is this; fetched or given content that " +
				"does not match it is never installed."},
		{Name: "links", Behaviour: applier.Parameter, Kind: applier.KindEnum, Values: []string{"manage", "follow"}, Default: "manage",
			Doc: "manage: a link at path is itself the managed object (content replaces the link, never writes through it); follow: manage what the link points to."},
		{Name: "force", Behaviour: applier.Parameter, Kind: applier.KindBoolean, Default: false,
			Doc: "Allow destroying directories: replacing one with a file or link, removing one with ensure: absent, purging subdirectories."},
		{Name: "replace", Behaviour: applier.Parameter, Kind: applier.KindBoolean, Default: true,
			Doc: "false: create the file when missing but never change the content (or kind) of an existing one; ownership and mode are still managed."},
		{Name: "backup", Behaviour: applier.Parameter, Kind: applier.KindString,
			Accepts: applier.AcceptString | applier.AcceptBoolean, Default: "false", Munge: mungeBackup,
			Doc: "Keep the old content before replacing or removing a file: false (no " +
				"backup); a string starting with '.' (a copy beside the file with that " +
				"suffix; true means .puppet-bak); any other string (the local " +
				"content-addressed filebucket under the state directory; see `receiver " +
				"filebucket list|get|restore`)."},
		{Name: "recurse", Behaviour: applier.Parameter, Kind: applier.KindEnum, Values: []string{"true", "false", "remote"}, Default: "false",
			Doc: "For a directory: true manages its contents (copying the source tree " +
				"when source is set, applying owner/group/mode to every entry, and " +
				"allowing purge); remote copies the source tree only; false manages the " +
				"directory alone."},
		{Name: "recurselimit", Behaviour: applier.Parameter, Kind: applier.KindInteger, Validate: nonNegative("recurselimit"),
			Doc: "How deep recursion goes: 1 manages the direct entries only; 0 is like recurse: false."},
		{Name: "purge", Behaviour: applier.Parameter, Kind: applier.KindBoolean, Default: false,
			Doc: "With recurse: true, remove entries the source does not have (every " +
				"entry when there is no source), except ignored ones; directories only " +
				"with force. What the run manages is left alone: a File of the run and " +
				"everything below it, and the File a concat_file of the run generates."},
		{Name: "ignore", Behaviour: applier.Parameter, Kind: applier.KindString, Array: true, Accepts: applier.AcceptString,
			Doc: "Glob patterns (on entry names) skipped by recursion and purge."},
		{Name: "max_files", Behaviour: applier.Parameter, Kind: applier.KindInteger, Default: int64(0),
			Validate: atLeastMinusOne("max_files"),
			Doc: "Fail a recursion that would manage more than this many entries. 0: no bound, but a " +
				"warning when a tree holds more than 1000 entries (as Puppet); -1: no bound and no warning."},
		// SELinux contexts: Puppet manages them only where SELinux is
		// enabled; pippet accepts them so that catalogs and requests
		// written for such hosts apply, and manages no context.
		{Name: "seluser", Behaviour: applier.Parameter, Kind: applier.KindAny,
			Doc: "The SELinux user of the file's context. Accepted and not managed: pippet sets no SELinux context (as Puppet where SELinux is off)."},
		{Name: "selrole", Behaviour: applier.Parameter, Kind: applier.KindAny,
			Doc: "The SELinux role of the file's context. Accepted and not managed, as seluser."},
		{Name: "seltype", Behaviour: applier.Parameter, Kind: applier.KindAny,
			Doc: "The SELinux type of the file's context. Accepted and not managed, as seluser."},
		{Name: "selrange", Behaviour: applier.Parameter, Kind: applier.KindAny,
			Doc: "The SELinux range (MLS/MCS level) of the file's context. Accepted and not managed, as seluser."},
		{Name: "selinux_ignore_defaults", Behaviour: applier.Parameter, Kind: applier.KindBoolean, Default: false,
			Doc: "Whether Puppet would skip the SELinux policy's default context. Accepted and not used, as seluser."},
		{Name: "show_diff", Behaviour: applier.Parameter, Kind: applier.KindBoolean, Default: true,
			Doc: "Whether a content change shows a unified diff (bounded in size) in its event and on the log " +
				"(in noop, the diff a change would make), as Puppet's: only when Puppet's show_diff setting is on " +
				"(the receiver's and `receiver apply`'s --show_diff, puppet.conf, the agent's -t), so by default " +
				"no content ever appears in answers or logs, only checksums. A Sensitive content (sensitive_parameters) " +
				"is never diffed: `content: [diff redacted]`. pippet's own rule: a file others cannot read is diffed " +
				"only when show_diff => true is given."},
		{Name: "validate_cmd", Behaviour: applier.Parameter, Kind: applier.KindString, Accepts: applier.AcceptString,
			Doc: "A command (fully qualified) that checks new content before it replaces " +
				"the file; validate_replacement in it stands for the temp file's path. " +
				"A non-zero exit fails the resource and keeps the old file."},
		{Name: "validate_replacement", Behaviour: applier.Parameter, Kind: applier.KindString, Accepts: applier.AcceptString, Default: "%",
			Doc: "The placeholder replaced by the temp file's path in validate_cmd."},
		{Name: "source_permissions", Behaviour: applier.Parameter, Kind: applier.KindEnum,
			Values: []string{"use", "use_when_creating", "ignore"}, Default: "ignore",
			Doc: "Whether owner, group and mode not given are copied from a local source: always (use), when creating (use_when_creating), or never (ignore)."},
		{Name: "staging_location", Behaviour: applier.Parameter, Kind: applier.KindPath, Munge: mungePath,
			Doc: "The directory new content is written to before it is renamed into place (default: the file's own directory). The rename is only atomic on the same file system."},
		{Name: "type", Behaviour: applier.ReadOnly, Kind: applier.KindString,
			Doc: "The kind of file found (file, directory, link, ...); read-only."},
		{Name: "mtime", Behaviour: applier.ReadOnly, Kind: applier.KindString,
			Doc: "The file's modification time; read-only."},
		{Name: "ctime", Behaviour: applier.ReadOnly, Kind: applier.KindString,
			Doc: "The file's status change time; read-only."},
	},
	Validate:  validate,
	Providers: []*applier.ProviderSpec{posixSpec},
}

func init() { applier.Register(Type) }

func mungePath(v any) (any, error) {
	s, _ := v.(string)
	if !filepath.IsAbs(s) {
		return nil, fmt.Errorf("file paths must be fully qualified, not '%s'", s)
	}
	if lexicallyClean(s) {
		return v, nil // no new string, no new interface value
	}
	return filepath.Clean(s), nil
}

// lexicallyClean reports whether filepath.Clean would return the absolute
// path s unchanged, with a few substring searches instead of Clean's walk
// byte by byte: no empty, "." or ".." element and no trailing slash.
func lexicallyClean(s string) bool {
	if s == "/" {
		return true
	}
	return !strings.HasSuffix(s, "/") && !strings.HasSuffix(s, "/.") && !strings.HasSuffix(s, "/..") &&
		!strings.Contains(s, "//") && !strings.Contains(s, "/./") && !strings.Contains(s, "/../")
}

// mungeContent wraps the content (a scalar as YAML wrote it) in a
// *Content; a *Content from defaultContent passes through.
func mungeContent(v any) (any, error) {
	switch x := v.(type) {
	case *Content:
		return x, nil
	case string:
		return &Content{Data: x, Inline: true}, nil
	case int64, float64, bool, uint64:
		return &Content{Data: fmt.Sprint(x), Inline: true}, nil
	}
	return nil, fmt.Errorf("content must be a string, not %s", applier.RubyClass(v))
}

func mungeSource(v any) (any, error) {
	s, _ := v.(string)
	u, err := source.Parse(s)
	if err != nil {
		return nil, err
	}
	switch u.Scheme {
	case "file", "http", "https", "puppet":
	default:
		return nil, &source.UnsupportedSchemeError{Scheme: u.Scheme}
	}
	if strings.HasPrefix(s, "/") {
		s = filepath.Clean(s)
	} else if t := strings.TrimRight(s, "/"); !strings.HasSuffix(t, ":") {
		s = t
	}
	return s, nil
}

func mungeBackup(v any) (any, error) {
	s, _ := v.(string)
	switch s {
	case "false", "":
		return "false", nil
	case "true":
		return ".puppet-bak", nil
	}
	return s, nil
}

// nonEmpty checks an owner or group: a name, or an id in range.
func nonEmpty(name string) func(any) error {
	id := applier.ValidID(name)
	return func(v any) error {
		if s, _ := v.(string); strings.TrimSpace(s) == "" {
			return fmt.Errorf("invalid %s name ''", name)
		}
		return id(v)
	}
}

func atLeastMinusOne(name string) func(any) error {
	return func(v any) error {
		if n, _ := v.(int64); n < -1 {
			return fmt.Errorf("invalid %s value %d: a count, or -1 for no limit", name, n)
		}
		return nil
	}
}

func nonNegative(name string) func(any) error {
	return func(v any) error {
		if n, _ := v.(int64); n < 0 {
			return fmt.Errorf("invalid %s value %d", name, n)
		}
		return nil
	}
}

// knownEnsure are the ensure values that are not link targets.
var knownEnsure = map[string]bool{"present": true, "absent": true, "file": true, "directory": true, "link": true,
	"fifo": true, "socket": true, "characterSpecial": true, "blockSpecial": true}

// specialKinds are the kinds of file that can be checked (ensure) but
// never made: find reports them, so its params applied back must answer
// unchanged rather than replace the node with a link named after it.
var specialKinds = map[string]bool{"fifo": true, "socket": true, "characterSpecial": true, "blockSpecial": true}

// undeletable are the kinds never removed or replaced (Puppet: "Could
// not remove files of type characterSpecial").
var undeletable = map[string]bool{"characterSpecial": true, "blockSpecial": true, "unknown": true}

func defaultEnsure(r *applier.Resource) any {
	switch {
	case r.Given("target"):
		return "link"
	case r.Given("content"):
		return "file"
	case r.Given("source"):
		return "present"
	}
	return nil
}

// defaultContent makes a source (or a recursion) a managed content value:
// the provider fills its checksum from the source's metadata.
func defaultContent(r *applier.Resource) any {
	if r.Given("content") {
		return nil
	}
	if r.Given("source") || recursive(r) {
		return &Content{Kind: r.String("checksum"), by: byNothing, tree: recursive(r)}
	}
	return nil
}

func recursive(r *applier.Resource) bool {
	rec := r.String("recurse")
	if rec != "true" && rec != "remote" {
		return false
	}
	if n, ok := r.Int("recurselimit"); ok && n == 0 {
		return false
	}
	return true
}

func ensureInSync(is, should any) bool {
	if should == "present" {
		return is != nil && is != "absent"
	}
	return is == should
}

var sourceOnlyChecksums = map[string]bool{source.None: true, source.MTime: true, source.CTime: true}

// validate checks the rules across attributes and fills what one
// attribute implies for another (a link target given as ensure), then
// digests inline content once.
func validate(r *applier.Resource) error {
	ensure := r.String("ensure")
	if ensure != "" && !knownEnsure[ensure] {
		if r.Given("target") {
			return fmt.Errorf("ensure '%s' names a link target but target is also given", ensure)
		}
		r.Set("ensure", "link")
		r.SetGiven("target", ensure)
		ensure = "link"
	}
	creators := 0
	for _, n := range []string{"content", "source", "target"} {
		if r.Given(n) {
			creators++
		}
	}
	if creators > 1 {
		return errors.New("You cannot specify more than one of content, source, target")
	}
	if specialKinds[ensure] && creators > 0 {
		return fmt.Errorf("ensure '%s' checks the kind of an existing file; it takes no content, source or target", ensure)
	}
	if ensure == "directory" && r.Given("content") {
		return errors.New("content cannot be managed on a directory (ensure: directory)")
	}
	if ensure == "link" && !r.Has("target") {
		return errors.New("ensure: link needs a target")
	}
	sum := r.String("checksum")
	if r.String("recurse") == "remote" && !r.Given("source") {
		return errors.New("You cannot specify a remote recursion without a source")
	}
	if sum == source.None && r.Given("source") {
		return errors.New("You cannot specify source when using checksum 'none'")
	}
	if sourceOnlyChecksums[sum] && r.Given("content") {
		return fmt.Errorf("You cannot specify content when using checksum '%s'", sum)
	}
	if cv := r.String("checksum_value"); cv != "" {
		if !source.IsDigest(sum) {
			return fmt.Errorf("checksum_value needs a digest checksum, not '%s'", sum)
		}
		if !source.ValidHex(sum, strings.ToLower(cv)) {
			return fmt.Errorf("Checksum value '%s' is not a valid checksum type %s", cv, sum)
		}
		r.Set("checksum_value", strings.ToLower(cv))
	}
	if r.Given("validate_cmd") {
		cmd := r.String("validate_cmd")
		if !strings.HasPrefix(cmd, "/") {
			return fmt.Errorf("validate_cmd must be fully qualified: '%s'", cmd)
		}
		if !strings.Contains(cmd, r.String("validate_replacement")) {
			return fmt.Errorf("validate_cmd must contain the placeholder '%s'", r.String("validate_replacement"))
		}
	}
	if r.Given("source") {
		if err := localSourcesExist(r.Strings("source")); err != nil {
			return err
		}
	}
	if c, ok := r.Value("content").(*Content); ok {
		c.Kind = sum
		if c.Inline && r.String("checksum_value") != "" {
			// Pinned: the file is in sync when its digest is this one.
			c.by, c.Sum = byDigest, r.String("checksum_value")
		}
	}
	return nil
}

// localSourcesExist fails when every source is local and none exists: that
// is an error in the request (Puppet answers it as one), while a missing
// remote source is found out, and fails, when the resource is applied.
func localSourcesExist(srcs []string) error {
	for _, s := range srcs {
		u, err := source.Parse(s)
		if err != nil {
			return err
		}
		if u.Scheme != "file" {
			return nil
		}
		if _, err := os.Stat(u.Path); err == nil || !errors.Is(err, fs.ErrNotExist) {
			return nil
		}
	}
	return fmt.Errorf("Could not retrieve information from source(s) %s", strings.Join(srcs, ", "))
}
