// Package protocol turns bytes into requests and results into bytes for the
// line protocol of `puppet yamlresource receive`, and knows nothing of the
// resource types behind it.
//
// A request is one line: either JSON
//
//	{"type":"file","title":"/etc/motd","params":"{ensure: file, content: hi}"}
//
// where params is a YAML mapping in a string (or a JSON object), with an
// optional "id" echoed in the answer; or the legacy form `TYPE TITLE YAML`,
// split on the first two spaces. The answer is one JSON line whose first six
// fields keep the order Puppet's receiver uses:
//
//	{"resource":"File[/etc/motd]","failed":false,"changed":true,"noop":false,"error":false,"exception":null}
//
// followed by the extensions "id" and "events" when they are present.
//
// # Decoding
//
// DecodeLine first refuses invalid UTF-8 and control characters, then reads
// a JSON request with a small strict reader of its own (exact byte offsets
// in its errors, no reflection, unknown or repeated members refused) or
// splits the legacy form. Params in a string go to package yamlparams,
// which reads YAML the way Puppet does through Ruby's Psych (YAML 1.1
// scalars, safe loading, bounded work, errors located by line and column);
// params given as a JSON object are read by the JSON reader, within the
// same limits (yamlparams.MaxDepth, yamlparams.MaxValues).
//
// A Decoder decodes a stream of lines as the receiver loop does, reusing
// the Params mapping and its buffers from line to line, and sharing short
// type names, keys and values repeated from line to line through a small
// bounded cache that learns them from the input (internal/intern: no
// names are known in advance), so that a line costs only the strings new
// to it; an Applier must therefore not keep a request after answering it.
// Scans over plain bytes (the UTF-8 and control check, JSON strings,
// quoted YAML values, answer strings) go eight bytes at a time
// (internal/swar). The line length limit is the reader's (cmd/receiver).
//
// # Encoding
//
// AppendResult appends the answer line to a caller's buffer without
// reflection; strings are escaped by hand (invalid UTF-8 becomes U+FFFD,
// so an answer is always valid JSON).
package protocol

import (
	"context"
	"strconv"
	"strings"

	"github.com/pippet/pippet/protocol/yamlparams"
)

// Request is one decoded request line.
type Request struct {
	// Type is the resource type's name as the caller wrote it; lookups are
	// case-insensitive.
	Type string
	// Title is the resource's title; it fills the type's namevar unless the
	// params name it.
	Title string
	// Params holds the decoded YAML (or JSON) mapping. Values are what the
	// YAML 1.1 reading gives: string, int64, float64, bool, nil, []any and
	// map[string]any.
	Params map[string]any
	// ID is the raw JSON of the request's "id" member, echoed verbatim in
	// the answer; nil when the request had none.
	ID []byte
	// Refresh is the request's "refresh" member (a protocol extension): the
	// caller's graph has a notify edge into this resource that fired. A
	// running service is restarted, an exec runs (refreshonly ones only
	// then); other types ignore it.
	Refresh bool
	// Op is the request's verb, its "op" member (a protocol extension):
	// OpApply (the default, and the only verb of a legacy line), OpFind,
	// OpSearch, OpDescribe or OpDeclare. The read verbs change nothing.
	Op Op
	// Resources is a declaration's (OpDeclare) "resources" member: the
	// resources of the controller's run, in the order given (empty, not
	// nil, for a declaration that clears the run). Unlike Params, it is
	// never reused by the Decoder: the receiver keeps it for the requests
	// that follow.
	Resources []RunResource
	// Hints say how a parameter name in Params was probably meant, when
	// reading the line made it out of something else (the rest of a
	// legacy line's title with spaces, a flow value cut at a comma); nil
	// for nearly every request. See Explain.
	Hints []yamlparams.Hint
}

// Explain adds to a failed answer the hints about the parameter its
// exception names ('go=r', quoted as Puppet quotes an unknown parameter),
// so that the error stays Puppet's and says what was probably meant.
func (r *Request) Explain(res *Result) {
	for _, h := range r.Hints {
		if res.Failed && strings.Contains(res.Exception, "'"+h.Key+"'") && !strings.Contains(res.Exception, h.Text) {
			res.Exception += "; " + h.Text
		}
	}
}

// Op is a request's verb.
type Op uint8

const (
	// OpApply converges the resource (the default).
	OpApply Op = iota
	// OpFind reads one resource's current state.
	OpFind
	// OpSearch lists every instance of a type its provider can see.
	OpSearch
	// OpDescribe answers a type's declaration.
	OpDescribe
	// OpDeclare sets the run the requests that follow are applied in: the
	// set of resources the controller's run manages (Request.Resources),
	// replacing any earlier declaration; an empty one clears it.
	OpDeclare
)

var opNames = [...]string{OpApply: "apply", OpFind: "find", OpSearch: "search", OpDescribe: "describe", OpDeclare: "declare"}

// opList names the ops for an error about an unknown one.
const opList = "apply, find, search, describe or declare"

// UnknownOp is the message about an op that is none of these.
func UnknownOp(op string) string {
	return "unknown op " + strconv.Quote(op) + " (expected " + opList + ")"
}

// RunResource is one resource of a run as a controller declares it
// (OpDeclare) or a catalog holds it: parameters are data, not validated
// or munged by the type (applier.RunResource is this type).
type RunResource struct {
	// Type is the type's name in lower case; Title the resource's title.
	Type, Title string
	// Params holds the resource's parameters as decoded values (string,
	// int64, float64, bool, nil, []any, map[string]any).
	Params map[string]any
}

// String is the op's name as the "op" member spells it.
func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return "op(" + strconv.Itoa(int(o)) + ")"
}

// ParseOp reads an "op" member's value.
func ParseOp(s string) (Op, bool) {
	for i, n := range opNames {
		if n == s {
			return Op(i), true
		}
	}
	return 0, false
}

// Status of one event.
const (
	StatusSuccess = "success"
	StatusFailure = "failure"
	StatusNoop    = "noop"
)

// Event records one property change, made or (in noop) only wanted.
type Event struct {
	Property string `json:"property"`
	Previous any    `json:"previous"`
	Desired  any    `json:"desired"`
	Message  string `json:"message"`
	Status   string `json:"status"`
	// Diff is a content change's unified diff, with Puppet's show_diff
	// setting on and the resource allowing it (pippet's; none in noop).
	Diff string `json:"diff,omitempty"`
}

// Result is the answer to one request.
type Result struct {
	// Resource is the reference such as File[/etc/motd]; empty (and left out
	// of the answer) when the line could not be decoded far enough to name it.
	Resource string
	// Failed: the resource did not converge (always true when Error is).
	Failed bool
	// Changed: at least one change was made.
	Changed bool
	// Noop: the resource was evaluated in noop mode.
	Noop bool
	// Error: the request could not be evaluated at all.
	Error bool
	// Exception is the message of an error or failure; "" encodes as null.
	Exception string
	// ID is the request's id, echoed verbatim (raw JSON); nil when none.
	ID []byte
	// Events lists the changes, made or wanted; left out when empty.
	Events []Event
	// Provider names the provider that applied the resource, for a
	// run's report (Puppet's provider_used); it is not part of the
	// answer line pippet writes. Set by engine.Session's Apply, and read
	// from pippet-bridge's answers (an optional "provider" member).
	Provider string
	// RunChanges are the parameters a delegated resource's type set on
	// other resources of its run, as a Puppet type may change another
	// resource of its catalog before it is applied (datacat_collector sets
	// its File's content): each names the resource (Type as Puppet spells
	// it, Title) and the parameters set, with their new values. Read from
	// pippet-bridge's answers (an optional "run_changes" member); not part
	// of the answer line pippet writes.
	RunChanges []RunResource

	// The read verbs' members, each left out of the answer when nil.

	// State is find's answer: every property's current value as `puppet
	// resource` prints it, ensure first.
	State State
	// Params is find's answer: State as a YAML flow mapping that, sent as
	// an apply's params, leaves the resource unchanged. Set with State.
	Params string
	// Instances is search's answer (an empty non-nil slice: none found).
	Instances []Instance
	// Declaration is describe's answer: the type's declaration as a JSON
	// object (raw).
	Declaration []byte
}

// Property is one property's current value in a State.
type Property struct {
	Name  string
	Value any
}

// State is a resource's current values, in the order an answer lists them.
// It encodes as a JSON object in that order.
type State []Property

// Get returns the named value and whether the state has it.
func (s State) Get(name string) (any, bool) {
	for _, p := range s {
		if p.Name == name {
			return p.Value, true
		}
	}
	return nil, false
}

// Instance is one entry of a search's answer.
type Instance struct {
	Title string
	State State
}

// Applier evaluates one request. The receiver loop depends only on this.
//
// Apply answers every request itself, a panic of its own included (the
// loop recovers only around decoding and encoding; engine.Engine turns a
// panic in a type or provider into an error answer). It need not copy
// req.ID into the answer: the loop echoes the id, for every Applier.
//
// Apply must not keep or change req, its Params or its ID: the receiver
// reuses them for the next line (see Decoder), or hands the same request
// again for a line sent again. The values inside Params are never reused
// and may be kept, but not changed.
type Applier interface {
	Apply(ctx context.Context, req *Request) Result
}

// ErrorResult is the answer to a request that could not be evaluated.
func ErrorResult(resource string, msg string) Result {
	return Result{Resource: resource, Failed: true, Error: true, Exception: msg}
}
