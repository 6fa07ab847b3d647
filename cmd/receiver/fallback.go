package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/pippet/pippet/applier/engine"
	"github.com/pippet/pippet/delegate"
	"github.com/pippet/pippet/protocol"
)

// withFallback puts the fallback the options describe in front of the
// engine session; without one the session is returned as it is. The types o.Types names
// go to the fallback even when native: naming one without a fallback, or
// one the fallback cannot apply, is an error.
func withFallback(sess *engine.Session, o delegate.Options) (protocol.Applier, *delegate.Fallback, error) {
	fb, err := delegate.New(o)
	if err != nil {
		return sess, nil, err
	}
	if fb == nil {
		if len(o.Types) > 0 {
			return sess, nil, fmt.Errorf("--delegate %s: there is no fallback to send them to (--fallback %s)", strings.Join(o.Types, ","), o.Fallback)
		}
		return sess, nil, nil
	}
	forced := map[string]bool{}
	for _, t := range o.Types {
		if !fb.Knows(t) {
			return sess, nil, fmt.Errorf("--delegate %s: the fallback has no type %s", strings.Join(o.Types, ","), t)
		}
		forced[strings.ToLower(t)] = true
	}
	reg := sess.Engine().Registry()
	return &delegate.Applier{
		Native: sess,
		NativeKnow: func(name string) bool {
			if len(forced) > 0 && forced[strings.ToLower(name)] {
				return false
			}
			_, ok := reg.Lookup(name)
			return ok
		},
		Fallback: fb,
	}, fb, nil
}

// closeFallback stops the Puppet process, if one runs.
func closeFallback(ctx context.Context, fb *delegate.Fallback, log *slog.Logger) {
	if fb == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := fb.Close(ctx); err != nil {
		log.Warn("stopping the fallback: " + err.Error())
	}
}
