// Package linefile holds what the types that edit a text file in place
// (file_line, ini_setting, ini_subsetting) share: Ruby's line rules
// (chomp, puts), writing the new content
// atomically the way Ruby's File.open(path, 'w') would leave it (through
// a symlink, keeping the existing file's owner and mode), and a small
// cache of compiled regular expressions.
package linefile

import (
	"context"
	"fmt"
	"regexp"
	"sync"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/atomicfile"
	"github.com/pippet/pippet/applier/dirsync"
)

// Chomp drops one trailing "\r\n", "\n" or "\r", as Ruby's String#chomp.
func Chomp(l []byte) []byte {
	n := len(l)
	switch {
	case n >= 2 && l[n-2] == '\r' && l[n-1] == '\n':
		return l[:n-2]
	case n >= 1 && (l[n-1] == '\n' || l[n-1] == '\r'):
		return l[:n-1]
	}
	return l
}

// NoNewline drops one trailing "\n" (a regular expression is matched
// against a line without it: Ruby's $ matches before it, Go's only at the
// end of the text).
func NoNewline(l []byte) []byte {
	if n := len(l); n > 0 && l[n-1] == '\n' {
		return l[:n-1]
	}
	return l
}

// Puts appends s to buf as Ruby's IO#puts writes it: with a "\n" unless
// it already ends with one.
func Puts(buf, s []byte) []byte {
	buf = append(buf, s...)
	if len(s) == 0 || s[len(s)-1] != '\n' {
		buf = append(buf, '\n')
	}
	return buf
}

// Write replaces path's content with data atomically (package
// atomicfile): a symlink at path is followed and the file it points to
// replaced, as Ruby's File.open(path, 'w') writes through it; an existing
// file keeps its owner, group and mode; a new one is made with mode 0644
// owned by the writer. On any failure the old file is left whole.
func Write(ctx context.Context, env *applier.Env, path string, data []byte) error {
	var dirs *dirsync.Syncer
	if env != nil {
		dirs = env.Dirs
	}
	o := atomicfile.Options{Mode: 0o644, UID: -1, GID: -1, KeepExisting: true, FollowLinks: true, Dirs: dirs}
	if err := atomicfile.Write(ctx, path, data, o); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// regexps caches compiled expressions by their source: a converged
// resource re-sent on every run compiles its pattern once. The cache is
// dropped whole when it holds maxRegexps.
var (
	regexpsMu sync.Mutex
	regexps   = map[string]*regexp.Regexp{}
)

const maxRegexps = 1024

// Regexp compiles expr (Go's RE2 syntax), cached.
func Regexp(expr string) (*regexp.Regexp, error) {
	regexpsMu.Lock()
	re, ok := regexps[expr]
	regexpsMu.Unlock()
	if ok {
		return re, nil
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, err
	}
	regexpsMu.Lock()
	if len(regexps) >= maxRegexps {
		clear(regexps)
	}
	regexps[expr] = re
	regexpsMu.Unlock()
	return re, nil
}
