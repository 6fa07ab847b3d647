// Package stream is the receiver's request stream: it reads request
// lines from an input, applies each through a protocol.Applier (an
// engine session, or the delegating applier in front of it) and writes
// one answer line per request, in order, to an output.
//
// Run owns everything that happens between the bytes and the Applier:
// lines bounded by Config.MaxLine (a longer one is answered with an error
// and skipped, never held whole), a banner before the first answer,
// answers written one by one so a controller waiting for each gets it at
// once, requests sent ahead to a delegating Applier that pipelines them
// (their answers still in input order), the deferred fsyncs of changed
// directories (durability.go) and the Tally behind the summary line and
// --detailed-exitcodes. Signals arrive on a channel: the first lets the
// resource in progress finish and be answered, then ends the stream; a
// second cancels that resource's context; an idle stream ends at once.
//
// cmd/receiver keeps the flags, the signal set-up and the wiring; the
// stream's tests drive Run with in-memory streams and mock Appliers.
package stream
