package file

import "context"

// diffWanted is what a content change shows of itself.
type diffWanted int

const (
	// diffNone: checksums only.
	diffNone diffWanted = iota
	// diffRedacted: the content is a secret; "[diff redacted]" is logged
	// where the diff would be, as Puppet logs it.
	diffRedacted
	// diffShown: a unified diff of the old and new content.
	diffShown
)

// diffWanted decides, as Puppet's file type does, whether a content
// change shows its diff: Puppet's show_diff setting is on (Env.Options;
// off by default) and the resource's show_diff is true (its default);
// a Sensitive content or source is never diffed. One rule is pippet's: a
// file others cannot read (no o+r on the file as it is) is diffed only
// when the resource gives show_diff => true itself, so that the setting
// alone never copies a private file's lines into logs and reports.
func (p *posix) diffWanted() diffWanted {
	if p.env == nil || !p.env.Options.ShowDiff || !p.r.Bool("show_diff") {
		return diffNone
	}
	if p.r.IsSensitive("content") || p.r.IsSensitive("source") {
		return diffRedacted
	}
	if p.fi != nil && p.fi.Mode().Perm()&0o004 == 0 && !p.r.Given("show_diff") {
		return diffNone
	}
	return diffShown
}

// logRedactedDiff logs Puppet's line for a secret's diff.
func (p *posix) logRedactedDiff(ctx context.Context) {
	p.env.Logger().Log(ctx, p.r.LogLevel, "/"+p.r.Ref()+"/content: [diff redacted]")
}
