package stream

import (
	"context"
	"errors"
	"fmt"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/protocol"
)

// A controller that owns the graph sends one resource at a time, and
// alone a resource cannot know the others of its run: a file's purge
// would remove what other resources manage, a concat_file would have no
// fragments. A declaration ({"op":"declare","resources":[...]}) says
// which resources the run manages; the loop makes them the run
// (applier.Run) of every request that follows, through the context it
// applies them with, until the next declaration replaces it (an empty
// one clears it). The run goes with each request wherever it is applied:
// the engine's types read it (applier.RunFrom), and the delegating
// Applier sends a catalog-aware delegated type (a concat_file, a
// resources purge) to Puppet with the resources of the run it needs, as
// under `receiver apply`. A declaration refused (a resource declared
// twice, bad params) leaves the run as it was. Requests sent ahead to the
// fallback before a declaration took the run they were read under.

// declare takes a declaration: its answer, with the run set for the
// lines that follow.
func (l *loop) declare(ctx context.Context, req *protocol.Request) protocol.Result {
	res := protocol.Result{ID: l.idOf(req)}
	if len(req.Resources) == 0 {
		l.runCtx = nil
		l.cfg.Log.Debug(fmt.Sprintf("request line %d: the run's declaration cleared", l.lineNo))
		return res
	}
	declare := l.cfg.Declare
	if declare == nil {
		declare = func(rs []protocol.RunResource) (applier.Run, error) { return applier.NewRunSet(nil, rs) }
	}
	run, err := declare(req.Resources)
	if err != nil {
		var re *applier.RunError
		ref := ""
		if errors.As(err, &re) {
			ref = protocol.Ref(re.Type, re.Title)
		}
		msg := fmt.Sprintf("request line %d: invalid declaration: %v; the run is unchanged", l.lineNo, err)
		l.cfg.Log.Error(msg)
		res = protocol.ErrorResult(ref, msg)
		res.ID = l.idOf(req)
		return res
	}
	l.runCtx = applier.WithRun(ctx, run)
	l.cfg.Log.Debug(fmt.Sprintf("request line %d: %d resources declared for the requests that follow", l.lineNo, len(req.Resources)))
	return res
}
