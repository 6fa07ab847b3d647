package file_line

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"unicode/utf8"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/sysfile"
	"github.com/pippet/pippet/applier/types/internal/linefile"
)

// provider is file_line's one provider: the file's content read by Get,
// rewritten by Set.
type provider struct {
	r   *applier.Resource
	env *applier.Env

	path         string
	line         []byte
	hasLine      bool
	match, after *regexp.Regexp
	enc          encodingKind
	replaceAll   bool
	multiple     bool
	content      []byte // the file as Get read it
	missing      bool   // no file (noop only: otherwise Get fails)
	scratch      []byte // a line decoded for matching
}

func newProvider(r *applier.Resource, env *applier.Env) (applier.Provider, error) {
	p := &provider{r: r, env: env, path: r.String("path"), enc: classify(r.String("encoding")),
		replaceAll: r.String("replace_all_matches_not_matching_line") == "true",
		multiple:   r.String("multiple") == "true"}
	if s, ok := r.Value("line").(string); ok {
		p.line, p.hasLine = []byte(s), true
	}
	var err error
	if s, ok := r.Value("match").(string); ok {
		if p.match, err = linefile.Regexp(s); err != nil {
			return nil, err
		}
	}
	if s, ok := r.Value("after").(string); ok {
		if p.after, err = linefile.Regexp(s); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// errInvalidUTF8 is Ruby's complaint about matching a line that is not
// valid in the file's declared encoding.
var errInvalidUTF8 = errors.New("invalid byte sequence in UTF-8")

// matches reports whether re matches the line l (its "\n" dropped).
func (p *provider) matches(re *regexp.Regexp, l []byte) (bool, error) {
	l = linefile.NoNewline(l)
	switch p.enc {
	case encUTF8:
		if !utf8.Valid(l) {
			return false, errInvalidUTF8
		}
	case encSingleByte:
		if !isASCII(l) {
			p.scratch = p.scratch[:0]
			for _, c := range l {
				p.scratch = utf8.AppendRune(p.scratch, rune(c))
			}
			l = p.scratch
		}
	}
	return re.Match(l), nil
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// isLine reports whether l (without its terminator) is the line.
func (p *provider) isLine(l []byte) bool {
	return p.hasLine && bytes.Equal(linefile.Chomp(l), p.line)
}

// forLines calls f with each line of the content, without allocating.
func forLines(b []byte, f func(l []byte) error) error {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n') + 1
		if i == 0 {
			i = len(b)
		}
		if err := f(b[:i]); err != nil {
			return err
		}
		b = b[i:]
	}
	return nil
}

// countMatches is the module's count_matches: the lines re matches
// (with replace_all_matches_not_matching_line, other than the line
// itself). A nil re fails on the first line, as Ruby's line.match(nil).
func (p *provider) countMatches(re *regexp.Regexp) (int, error) {
	n := 0
	err := forLines(p.content, func(l []byte) error {
		if p.replaceAll && p.isLine(l) {
			return nil
		}
		if re == nil {
			return errors.New("wrong argument type nil (expected Regexp)")
		}
		ok, err := p.matches(re, l)
		if ok {
			n++
		}
		return err
	})
	return n, err
}

// Get reads the file and answers ensure by the module's exists? rules.
func (p *provider) Get(ctx context.Context, cur *applier.State) error {
	b, err := sysfile.ReadRegular(p.path, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist) && p.r.Noop:
		p.missing = true
	case errors.Is(err, sysfile.ErrNotRegular):
		// A FIFO or device is refused, never read (a read would wait).
		return err
	case err != nil:
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("reading %s: %w", p.path, err)
	}
	p.content = b
	exists, err := p.exists()
	if err != nil {
		return err
	}
	if exists {
		cur.Set("ensure", "present")
	} else {
		cur.Set("ensure", "absent")
	}
	return nil
}

func (p *provider) exists() (bool, error) {
	lines := 0
	_ = forLines(p.content, func(l []byte) error {
		if p.isLine(l) {
			lines++
		}
		return nil
	})
	if p.match == nil {
		return lines > 0, nil
	}
	matches, err := p.countMatches(p.match)
	if err != nil {
		return false, err
	}
	r := p.r
	if r.String("ensure") == "present" {
		switch {
		case matches == 0:
			if lines == 0 && r.String("append_on_no_match") == "false" {
				return true, nil // the module's words: lies, but gets the job done
			}
			return lines > 0, nil
		case p.replaceAll:
			return false, nil
		case lines == 0:
			return r.String("replace") == "false", nil
		}
		return true, nil
	}
	if matches == 0 {
		return lines > 0, nil
	}
	if lines == 0 {
		return r.String("match_for_absence") == "true", nil
	}
	return true, nil
}

// Set makes the line present or absent.
func (p *provider) Set(ctx context.Context, c *applier.Change) error {
	var out []byte
	var err error
	if c.Should == "absent" {
		out, err = p.destroy()
	} else {
		var skip bool
		out, skip, err = p.create()
		if skip {
			return nil
		}
	}
	if err != nil {
		return err
	}
	return linefile.Write(ctx, p.env, p.path, out)
}

func (p *provider) create() ([]byte, bool, error) {
	if p.r.String("replace") != "true" {
		n, err := p.countMatches(p.match)
		if err != nil {
			return nil, false, err
		}
		if n > 0 {
			return nil, true, nil
		}
	}
	out := make([]byte, 0, len(p.content)+len(p.line)+2)
	switch {
	case p.match != nil:
		n, err := p.countMatches(p.match)
		if err != nil {
			return nil, false, err
		}
		if n > 1 && !p.multiple {
			return nil, false, fmt.Errorf("More than one line in file '%s' matches pattern '%s'", p.path, p.r.String("match"))
		}
		err = forLines(p.content, func(l []byte) error {
			m, err := p.matches(p.match, l)
			if err != nil {
				return err
			}
			if m {
				out = linefile.Puts(out, p.line)
			} else {
				out = linefile.Puts(out, l)
			}
			if n == 0 && p.after != nil {
				a, err := p.matches(p.after, l)
				if err != nil {
					return err
				}
				if a {
					out = linefile.Puts(out, p.line)
					n++
				}
			}
			return nil
		})
		if err != nil {
			return nil, false, err
		}
		if n == 0 {
			out = linefile.Puts(out, p.line)
		}
	case p.after != nil:
		n, err := p.countMatches(p.after)
		if err != nil {
			return nil, false, err
		}
		if n > 1 && !p.multiple {
			return nil, false, fmt.Errorf("%d lines match pattern '%s' in file '%s'. One or no line must match the pattern.", n, p.r.String("after"), p.path)
		}
		err = forLines(p.content, func(l []byte) error {
			out = linefile.Puts(out, l)
			a, err := p.matches(p.after, l)
			if a {
				out = linefile.Puts(out, p.line)
			}
			return err
		})
		if err != nil {
			return nil, false, err
		}
		if n == 0 {
			out = linefile.Puts(out, p.line)
		}
	default:
		_ = forLines(p.content, func(l []byte) error { out = linefile.Puts(out, l); return nil })
		out = linefile.Puts(out, p.line)
	}
	return out, false, nil
}

func (p *provider) destroy() ([]byte, error) {
	out := make([]byte, 0, len(p.content))
	if p.r.String("match_for_absence") == "true" && p.match != nil {
		n, err := p.countMatches(p.match)
		if err != nil {
			return nil, err
		}
		if n > 1 && !p.multiple {
			return nil, fmt.Errorf("More than one line in file '%s' matches pattern '%s'", p.path, p.r.String("match"))
		}
		err = forLines(p.content, func(l []byte) error {
			m, err := p.matches(p.match, l)
			if !m {
				out = append(out, l...)
			}
			return err
		})
		return out, err
	}
	_ = forLines(p.content, func(l []byte) error {
		if !p.isLine(l) {
			out = append(out, l...)
		}
		return nil
	})
	return out, nil
}
