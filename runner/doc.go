// Package runner is the controller side of pippet: what a graph engine
// (mgmt-style) imports to converge resources through one long-lived
// receiver process, ours or Puppet's `puppet yamlresource receive`.
//
// # One exchange
//
// Apply(ctx, r, res) writes one JSON line ({"type","title","params"}) to the
// child's stdin and reads lines from its stdout until one is an answer. Lines
// that are not JSON objects (Puppet prints `Notice:` and `Error:` lines on
// stdout) and the ready banner are skipped. An answer with error or failed
// set becomes a *ResultError carrying the whole Result, events included.
// Check(ctx, r, res) is the same exchange in noop mode: whether the resource
// is in sync, and the events that would happen. Result is protocol.Result,
// the model the receiver answers with, and references are protocol.Ref on
// both sides.
//
// Params are YAML in a string (Resource.Params) or Go values sent as a JSON
// object (Resource.Values; its doc has the table of Go values to YAML kinds).
// A request that cannot be sent as it is, invalid UTF-8 above all, is
// refused with ErrInvalidRequest before anything is written.
//
// Pipeline is the exchange for a stream: Send writes requests without
// waiting, Receive reads their answers in order, with at most
// PipelineWindow bytes of requests unanswered so that neither side can be
// blocked writing to the other.
//
// Declare tells the receiver which resources the controller's run
// manages, so that the requests that follow, one at a time, see them as a
// catalog's resources see each other (a purge leaves them alone, a
// concat_file gathers its fragments). A Receiver sends the declaration in
// force again to every child that replaces one (declare.go).
//
// # Reading answers without losing any
//
// Answers are read through one LineReader per child process, made when the
// child starts. Two problems go away with it. A decoder or buffered reader
// made per call (the obvious way, and the way engines written for Puppet's
// receiver do it) drops whatever it read ahead when it is thrown away; one
// persistent reader owns every byte. And a read that cannot be cancelled
// would, when a request times out, stay behind and swallow the next
// answer. On the child's pipe (an os.Pipe, which the runtime polls) the
// reader reads in Apply's goroutine, and the context interrupts the read
// through the pipe's read deadline, keeping a half-read line; on any
// other reader a goroutine splits the output into lines and hands them
// over a channel, and Apply waits on that channel and its context. Either
// way Apply gives up cleanly, and a lone answer reaches Apply without
// waiting for another goroutine to be scheduled.
//
// Giving up leaves the stream out of step (the answer may still come), so
// Apply then breaks the child (LineReader.Break) and the Runner replaces it
// before the next request. The same happens for a partial, malformed or
// missing answer, or a child that dies mid-request: that apply returns an
// error wrapping ErrNoAnswer, ErrBadAnswer or ErrReceiverDied, and the next
// one is answered by a fresh child. Apply never waits past its context.
//
// Every answer is checked against its request: it must name the request's
// resource (a search or describe, its type), and, with a child that
// announces protocol level 1 or more (ours, the fallback's bridge), carry
// the id the runner added to the request (a number per child, `"id":N`
// last in the line). A child that prints one answer too many is thus
// caught at the next answer (ErrBadAnswer, the child broken and replaced)
// instead of shifting every later answer by one. Puppet's receiver echoes
// no id: with it, an extra answer naming the next request's own resource
// cannot be told apart.
//
// # The Runner interface
//
// Runner keeps the shape engines already use for Puppet's receiver
// (LockApply, UnlockApply, InputStream, OutputStream) and adds two methods:
// LockApplyContext, the lock giving up at the end of a context, which Apply
// and Check call; and Lines, the persistent reader, as a method of the
// Runner rather than state kept by Apply: the reader's lifetime is the
// child's, which only the Runner knows, and the package keeps no global map
// of streams. Receiver is the real Runner; mock.Runner is a scripted one
// for tests.
//
// # Which call to make
//
// Every Receiver method that waits has a form taking a context:
// RegisterContext, UnregisterContext, LockApplyContext. Engine code calls
// those (Apply and Check do it themselves for the lock). The forms without
// a context are kept for code written against mgmt's pippet client; they
// wait as long as it takes, a start still bounded by StartTimeout and a
// stop by StopTimeout.
//
// # The process
//
// A Receiver counts its users: Register starts the child with the first
// and waits for its ready line (our {"ready":true,...} banner, or the
// `Notice:` line Puppet's receiver prints on stdout once it listens),
// Unregister stops it after the last (stdin
// closed, a grace period, then SIGKILL to its process group; it is always
// reaped). LockApply serializes applies from any number of goroutines and
// replaces a child that died or was broken. The child's stderr is logged
// line by line to Options.Logger (lines over DefaultMaxStderrLine cut
// short, logging going on), its starts and exits at debug level; a child
// that exits before it is ready is an error quoting its last stderr lines.
// An answer may be answerFactor times as long as the longest request the
// receiver reads (Options.MaxRequest), so every request it reads has an
// answer the runner reads. Get returns the process-wide Receiver
// (Configure sets its options before first use); New makes others.
//
// The command defaults to the `receiver` binary beside the running
// executable or on PATH; PIPPET_RECEIVER or Options.Command name any other,
// such as `puppet yamlresource receive --color=no` or `ssh HOST receiver`.
package runner
