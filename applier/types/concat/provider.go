package concat

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"sync"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/sysfile"
	"github.com/pippet/pippet/protocol"
)

// fragment is concat_fragment's provider: nothing to read or set.
type fragment struct {
	r   *applier.Resource
	env *applier.Env
}

// Get warns, as the module does, when the run has no concat_file the
// fragment belongs to.
func (f *fragment) Get(ctx context.Context, cur *applier.State) error {
	run := applier.RunFrom(ctx)
	if run == nil {
		return nil
	}
	target := f.r.String("target")
	tag := ""
	for _, x := range run.Resources("concat_fragment") {
		if x.Title == f.r.Title {
			tag = tagOf(x.Params)
		}
	}
	for _, cf := range run.Resources("concat_file") {
		path, _ := cf.Params["path"].(string)
		if path == "" {
			path = cf.Title
		}
		if target != "" && (target == path || target == cf.Title) || tag != "" && tag == tagOf(cf.Params) {
			return nil
		}
	}
	msg := ""
	if tag != "" {
		msg = "or tag '" + tag + " "
	}
	f.env.Logger().Warn(fmt.Sprintf("%s: Target Concat_file with path or title '%s' %snot found in the catalog", f.r.Ref(), target, msg))
	return nil
}

// Set is never called: the type has no properties.
func (f *fragment) Set(ctx context.Context, c *applier.Change) error { return nil }

// tagOf is a resource's tag parameter when it is one string (a list of
// one too).
func tagOf(p map[string]any) string {
	switch t := p["tag"].(type) {
	case string:
		return t
	case []any:
		if len(t) == 1 {
			s, _ := t[0].(string)
			return s
		}
	}
	return ""
}

// fileProvider is concat_file's provider.
type fileProvider struct {
	r     *applier.Resource
	env   *applier.Env
	files protocol.Applier
	req   *protocol.Request
	probe protocol.Result
}

// engines holds, per environment, an engine with the file type alone
// (the Env's Engine over a registry of file, found by its name among the
// registered types: a type never imports another): the one that applies
// concat_files' targets. Its requests are logged at debug level (see
// fileRequest): the noop probe's events are no news, and the real changes
// are logged once, as the concat_file's.
var engines sync.Map // *applier.Env -> protocol.Applier

func fileEngine(env *applier.Env) (protocol.Applier, error) {
	if e, ok := engines.Load(env); ok {
		return e.(protocol.Applier), nil
	}
	if env.Engine == nil {
		return nil, errors.New("concat_file applies its target through the engine, and none serves this environment")
	}
	ft, ok := applier.Default.Lookup("file")
	if !ok {
		return nil, errors.New("concat_file applies its target as a file, and no file type is registered (import applier/types/file)")
	}
	reg := applier.NewRegistry()
	reg.Add(ft)
	e, _ := engines.LoadOrStore(env, env.Engine(reg, env))
	return e.(protocol.Applier), nil
}

func newFileProvider(r *applier.Resource, env *applier.Env) (applier.Provider, error) {
	files, err := fileEngine(env)
	if err != nil {
		return nil, err
	}
	return &fileProvider{r: r, env: env, files: files}, nil
}

// outOfSync is the current ensure Get reports when the target is not in
// sync: the File properties a noop application would change.
type outOfSync struct{ props []string }

func formatState(v any) string {
	if o, ok := v.(outOfSync); ok {
		return "File " + strings.Join(o.props, ", ") + " out of sync"
	}
	return applier.FormatValue(v)
}

// fileRequest is the File request for the target: the module's
// generate, with the assembled content.
func (p *fileProvider) fileRequest(ctx context.Context) (*protocol.Request, error) {
	path := p.r.String("path")
	params := map[string]any{"path": path}
	if p.r.String("ensure") == "absent" {
		params["ensure"] = "absent"
	} else {
		content, err := p.content(ctx)
		if err != nil {
			return nil, err
		}
		params["ensure"] = "file"
		params["content"] = content
	}
	for _, name := range []string{"owner", "group", "mode", "replace", "backup", "validate_cmd", "show_diff"} {
		if v, ok := p.r.Get(name); ok {
			params[name] = v
		}
	}
	// The File's change lines would say again what the concat_file's say.
	params["loglevel"] = "debug"
	return &protocol.Request{Type: "file", Title: path, Params: params}, nil
}

// Get assembles the content and applies the File in noop: the target is
// in sync when nothing would change.
func (p *fileProvider) Get(ctx context.Context, cur *applier.State) error {
	req, err := p.fileRequest(ctx)
	if err != nil {
		return err
	}
	p.req = req
	probe := *req
	probe.Params = make(map[string]any, len(req.Params)+1)
	for k, v := range req.Params {
		probe.Params[k] = v
	}
	probe.Params["noop"] = true
	p.probe = p.files.Apply(ctx, &probe)
	if p.probe.Error || p.probe.Failed {
		return errors.New(strings.TrimPrefix(p.probe.Exception, "Could not evaluate File["+p.r.String("path")+"]: "))
	}
	var props []string
	for _, ev := range p.probe.Events {
		if ev.Status == protocol.StatusNoop {
			props = append(props, ev.Property)
		}
	}
	if len(props) == 0 {
		cur.Set("ensure", p.r.Value("ensure"))
		return nil
	}
	cur.Set("ensure", outOfSync{props: props})
	return nil
}

// NoopParts are, in noop, the File's own noop events for the target (its
// content, mode, owner...), as Puppet reports its generated File's.
func (p *fileProvider) NoopParts(property string) []applier.Part {
	if property != "ensure" {
		return nil
	}
	var parts []applier.Part
	for _, ev := range p.probe.Events {
		if ev.Status == protocol.StatusNoop {
			parts = append(parts, applier.Part{Property: ev.Property, Previous: ev.Previous, Desired: ev.Desired, Message: ev.Message})
		}
	}
	return parts
}

// Set applies the File for real; its events are the concat_file's.
func (p *fileProvider) Set(ctx context.Context, c *applier.Change) error {
	res := p.files.Apply(ctx, p.req)
	if res.Error {
		return errors.New(res.Exception)
	}
	for _, ev := range res.Events {
		part := applier.Part{Property: ev.Property, Previous: ev.Previous, Desired: ev.Desired, Message: ev.Message}
		if ev.Status == protocol.StatusFailure {
			msg, why, ok := strings.Cut(ev.Message, " failed: ")
			if !ok {
				why = ev.Message
			}
			part.Message, part.Err = msg, errors.New(why)
		}
		c.Parts = append(c.Parts, part)
	}
	if res.Failed && len(c.Parts) == 0 {
		return errors.New(res.Exception)
	}
	return nil
}

// piece is one fragment ready to sort: its key and content.
type piece struct {
	key, content string
}

// content assembles the fragments of the run.
func (p *fileProvider) content(ctx context.Context) (string, error) {
	run := applier.RunFrom(ctx)
	var pieces []piece
	if run != nil {
		path := p.r.String("path")
		tag := ""
		for _, cf := range run.Resources("concat_file") {
			if cf.Title == p.r.Title {
				tag = tagOf(cf.Params)
			}
		}
		for _, fr := range run.Resources("concat_fragment") {
			target, _ := fr.Params["target"].(string)
			if !(target != "" && (target == path || target == p.r.Title) || tag != "" && tag == tagOf(fr.Params)) {
				continue
			}
			pc, err := p.piece(fr)
			if err != nil {
				return "", err
			}
			pieces = append(pieces, pc)
		}
	}
	if err := sortPieces(pieces, p.r.String("order")); err != nil {
		return "", err
	}
	return merge(pieces, p.r.String("format"), p.r.Bool("force"))
}

// piece validates one fragment's raw parameters as the fragment type
// does and reads its content.
func (p *fileProvider) piece(fr applier.RunResource) (piece, error) {
	params := make(map[string]any, len(fr.Params))
	for k, v := range fr.Params {
		params[k] = v
	}
	r, err := FragmentType.NewResource(fr.Title, params, false)
	if err != nil {
		return piece{}, fmt.Errorf("fragment %s: %w", protocol.Ref("concat_fragment", fr.Title), err)
	}
	order := r.String("order")
	name := r.Name()
	var content string
	if c, ok := r.Value("content").(string); ok {
		content = c
	} else {
		srcs := r.Strings("source")
		found := false
		var refused error
		for _, s := range srcs {
			b, err := readSource(s)
			if err == nil {
				content, found = string(b), true
				break
			}
			if errors.Is(err, sysfile.ErrNotRegular) && refused == nil {
				refused = err
			}
		}
		if !found && refused != nil {
			// The module's words, and why: a FIFO is never read.
			return piece{}, fmt.Errorf("Could not retrieve source(s) %s (%w)", strings.Join(srcs, ", "), refused)
		}
		if !found {
			return piece{}, fmt.Errorf("Could not retrieve source(s) %s", strings.Join(srcs, ", "))
		}
	}
	if p.r.Bool("ensure_newline") && !strings.HasSuffix(content, "\n") {
		content += "\n"
	}
	return piece{key: order + "___" + name, content: content}, nil
}

// readSource reads a fragment's source: a local path or a file: URL.
func readSource(s string) ([]byte, error) {
	if strings.HasPrefix(s, "file:") {
		u, err := url.Parse(s)
		if err != nil {
			return nil, err
		}
		s = u.Path
	}
	if !strings.HasPrefix(s, "/") {
		return nil, fmt.Errorf("source %s: only local paths and file: URLs are read", s)
	}
	// A FIFO or device as a source is refused, never read (a read would
	// wait for a writer).
	return sysfile.ReadRegular(s, 0)
}

// errCompare is Ruby's complaint when sort meets a number and a word.
var errCompare = errors.New("comparison of Array with Array failed")

// sortPieces sorts as the module: numeric compares "ORDER___NAME" split
// once at "___", each half a number when it is all digits; alpha
// compares the halves of a split at "__" as strings.
func sortPieces(ps []piece, order string) error {
	var failed error
	if order == "numeric" {
		sort.SliceStable(ps, func(i, j int) bool {
			c, err := compareNumeric(ps[i].key, ps[j].key)
			if err != nil {
				failed = err
			}
			return c < 0
		})
		return failed
	}
	sort.SliceStable(ps, func(i, j int) bool {
		ai, bi, _ := strings.Cut(ps[i].key, "__")
		aj, bj, _ := strings.Cut(ps[j].key, "__")
		if ai != aj {
			return ai < aj
		}
		return bi < bj
	})
	return nil
}

var digits = func(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func compareNumeric(a, b string) (int, error) {
	pa, pb := strings.SplitN(a, "___", 2), strings.SplitN(b, "___", 2)
	for k := 0; k < len(pa) && k < len(pb); k++ {
		da, db := digits(pa[k]), digits(pb[k])
		switch {
		case da && db: // numbers of any length: fewer digits is smaller
			sa, sb := strings.TrimLeft(pa[k], "0"), strings.TrimLeft(pb[k], "0")
			if len(sa) != len(sb) {
				return len(sa) - len(sb), nil
			}
			if sa != sb {
				return strings.Compare(sa, sb), nil
			}
		case da != db:
			return 0, errCompare
		default:
			if pa[k] != pb[k] {
				if pa[k] < pb[k] {
					return -1, nil
				}
				return 1, nil
			}
		}
	}
	return len(pa) - len(pb), nil
}
