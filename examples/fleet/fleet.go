package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/pippet/pippet/protocol"
	"github.com/pippet/pippet/runner"
)

// Host is one machine of the fleet: a name and the command that starts a
// receiver there (`ssh web1 receiver`, or a local receiver).
type Host struct {
	Name    string
	Command []string
}

// Summary is what one host did with the resources.
type Summary struct {
	Host                       string
	Changed, Unchanged, Failed int
	// WouldChange counts the resources out of sync that were left alone:
	// the fleet ran with -noop, or the host's receiver runs with --noop.
	WouldChange int
	Elapsed     time.Duration
	Err         error   // the host could not be driven at all
	Failures    []error // the resources that failed, in order
}

func (s Summary) String() string {
	if s.Err != nil {
		return fmt.Sprintf("%s: not applied: %v", s.Host, s.Err)
	}
	n := s.Changed + s.WouldChange + s.Unchanged + s.Failed
	noop := ""
	if s.WouldChange > 0 {
		noop = fmt.Sprintf(", %d would change (noop)", s.WouldChange)
	}
	return fmt.Sprintf("%s: %d resources in %s: %d changed%s, %d unchanged, %d failed",
		s.Host, n, s.Elapsed.Round(time.Millisecond), s.Changed, noop, s.Unchanged, s.Failed)
}

// ReadResources reads requests one a line, in every form the receiver
// takes (protocol's decoder reads them): JSON ({"type","title","params"},
// params a YAML string or a JSON object, "refresh") or the legacy
// TYPE TITLE {yaml}; blank lines and lines starting with # are skipped. A
// read verb (find, search, describe) or a declaration is refused: the
// fleet applies resources.
func ReadResources(r io.Reader) ([]*runner.Resource, error) {
	var out []*runner.Resource
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if protocol.Skip(line) {
			continue
		}
		req, err := decode(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if req.Op != protocol.OpApply {
			return nil, fmt.Errorf("line %d: %s: op %q is not an apply; fleet applies resources", n, protocol.Ref(req.Type, req.Title), req.Op)
		}
		res := &runner.Resource{Type: req.Type, Title: req.Title, Refresh: req.Refresh}
		if len(req.Params) == 0 {
			res.Params = "{}"
		} else {
			res.Values = req.Params // DecodeLine's mapping is the request's own
		}
		out = append(out, res)
	}
	return out, sc.Err()
}

// decode reads one request line as the receiver does, but for one
// leniency the fleet has always had: a JSON request without "params" means
// "{}" (the receiver wants the member).
func decode(line []byte) (protocol.Request, error) {
	var req protocol.Request
	err := protocol.DecodeLine(line, &req)
	var de *protocol.DecodeError
	if errors.As(err, &de) && de.Type != "" && strings.Contains(de.Msg, `missing member "params"`) {
		i := bytes.IndexByte(line, '{') + 1
		with := append(append(append([]byte{}, line[:i]...), `"params":"{}",`...), line[i:]...)
		err = protocol.DecodeLine(with, &req)
	}
	return req, err
}

// Apply applies resources, in order, to every host at once, each through
// its own runner (its own receiver process, started and stopped here), and
// returns one summary per host, sorted by name. A host whose receiver
// cannot start, or whose connection keeps failing, does not hold back the
// others. Each resource gets at most timeout. With noop, nothing is
// changed: each resource is checked (runner.Check) and counted as would
// change or unchanged.
func Apply(ctx context.Context, hosts []Host, resources []*runner.Resource, timeout time.Duration, noop bool, log *slog.Logger) []Summary {
	out := make([]Summary, len(hosts))
	var wg sync.WaitGroup
	for i, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = applyHost(ctx, h, resources, timeout, noop, log)
		}()
	}
	wg.Wait()
	sort.Slice(out, func(i, j int) bool { return out[i].Host < out[j].Host })
	return out
}

func applyHost(ctx context.Context, h Host, resources []*runner.Resource, timeout time.Duration, noop bool, log *slog.Logger) Summary {
	s := Summary{Host: h.Name}
	start := time.Now()
	defer func() { s.Elapsed = time.Since(start) }()
	rec := runner.New(runner.Options{Command: h.Command, Logger: log.With("host", h.Name)})
	if err := rec.Register(); err != nil {
		s.Err = err
		return s
	}
	defer rec.Unregister()
	for _, res := range resources {
		if err := ctx.Err(); err != nil {
			s.Err = err
			return s
		}
		rctx, cancel := context.WithTimeout(ctx, timeout)
		changed, wouldChange, err := applyOne(rctx, rec, res, noop)
		cancel()
		var re *runner.ResultError
		switch {
		case err == nil && changed:
			s.Changed++
		case err == nil && wouldChange:
			s.WouldChange++
		case err == nil:
			s.Unchanged++
		case errors.As(err, &re):
			s.Failed++
			s.Failures = append(s.Failures, err)
		default:
			// The receiver or the connection failed: the runner replaces
			// the child for the next resource; this one counts as failed.
			s.Failed++
			s.Failures = append(s.Failures, fmt.Errorf("%s[%s]: %w", res.Type, res.Title, err))
		}
	}
	s.Elapsed = time.Since(start)
	return s
}

// applyOne converges res (or, with noop, checks it). wouldChange: the
// resource is out of sync and was left so, by this noop or by the host's
// receiver running in noop mode (its answer says noop and lists events).
func applyOne(ctx context.Context, r runner.Runner, res *runner.Resource, noop bool) (changed, wouldChange bool, err error) {
	if noop {
		inSync, _, err := runner.Check(ctx, r, res)
		return false, err == nil && !inSync, err
	}
	result, err := runner.ApplyResult(ctx, r, res)
	return result.Changed, result.Noop && len(result.Events) > 0, err
}

// ParseHost reads NAME=COMMAND (the command split on blanks).
func ParseHost(s string) (Host, error) {
	name, cmd, ok := strings.Cut(s, "=")
	if !ok || name == "" || strings.TrimSpace(cmd) == "" {
		return Host{}, fmt.Errorf("host %q: want NAME=COMMAND, e.g. web1='ssh web1 receiver'", s)
	}
	return Host{Name: name, Command: strings.Fields(cmd)}, nil
}
