package main

import (
	"context"
	"flag"
	"log/slog"
	"time"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/engine"
	"github.com/pippet/pippet/delegate"
	"github.com/pippet/pippet/protocol"
)

// addFallbackFlags declares --fallback and --modulepath (the receiver's
// and describe's).
func addFallbackFlags(fs *flag.FlagSet, fallback, modulePath *string) {
	fs.StringVar(fallback, "fallback", delegate.ModeAuto, "where requests of types pippet does not implement go: `puppet` (Puppet's resource layer through pippet's bridge), none (an error answer), auto (puppet when an installation is found, else none), or a receiver command line such as 'puppet yamlresource receive --color=no'")
	fs.StringVar(modulePath, "modulepath", "", "colon-separated `directories` of Puppet modules whose custom types and providers the fallback loads (default Puppet's: CODEDIR/environments/production/modules, CODEDIR/modules, /usr/share/puppet/modules)")
}

// withFallback wraps the engine with the fallback the options describe;
// without one the engine is returned as it is.
func withFallback(eng *engine.Engine, o delegate.Options) (protocol.Applier, *delegate.Fallback, error) {
	fb, err := delegate.New(o)
	if err != nil || fb == nil {
		return eng, nil, err
	}
	reg := eng.Registry()
	return &delegate.Applier{
		Native:     eng,
		NativeKnow: func(name string) bool { _, ok := reg.Lookup(name); return ok },
		Fallback:   fb,
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

// puppetLevel is Puppet's name for the receiver's log level.
func puppetLevel(l slog.Level) string {
	switch {
	case l <= slog.LevelDebug:
		return "debug"
	case l <= slog.LevelInfo:
		return "info"
	case l <= applier.LevelNotice:
		return "notice"
	case l <= slog.LevelWarn:
		return "warning"
	}
	return "err"
}
