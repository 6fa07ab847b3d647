package server

import (
	"fmt"
	"time"

	json "github.com/goccy/go-json"

	"github.com/pippet/pippet/protocol"
)

// FactsOptions are what the agent adds to the facts it sends, as
// Puppet's agent adds them (Puppet::Node::Facts#add_local_facts).
type FactsOptions struct {
	// ClientVersion is sent as clientversion (the Puppet version the
	// agent stands in for; default the puppetversion fact, else
	// DefaultClientVersion).
	ClientVersion string
	// Noop is sent as clientnoop.
	Noop bool
	// TTL is how long the facts are valid: expiration is the timestamp
	// plus TTL (Puppet's runinterval, default 30 minutes).
	TTL time.Duration
	// Now is the facts' timestamp (default the current time).
	Now time.Time
	// AgentSpecifiedEnvironment is sent as agent_specified_environment
	// when not empty: the environment the agent was given (command line,
	// puppet.conf's [agent] or [main]), which Puppet adds as a fact of
	// its own.
	AgentSpecifiedEnvironment string
}

// DefaultClientVersion is the clientversion sent when neither the
// options nor the facts give one: the Puppet release pippet's agent
// behaves as.
const DefaultClientVersion = protocol.PuppetVersion

// FactsJSON is the facts document the catalog request sends, in the form
// Puppet 7 renders Puppet::Node::Facts as JSON: {"name": certname,
// "values": {...}, "timestamp": ..., "expiration": ...}, times in ISO
// 8601 with nanoseconds. values (the facts, legacy names included as
// Puppet sends them) gain clientcert, clientversion and clientnoop; the
// caller's map is not changed.
func FactsJSON(certname string, values map[string]any, o FactsOptions) ([]byte, error) {
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	ttl := o.TTL
	if ttl <= 0 {
		ttl = 30 * time.Minute
	}
	v := make(map[string]any, len(values)+4)
	for k, x := range values {
		v[k] = sanitize(x)
	}
	v["clientcert"] = certname
	cv := o.ClientVersion
	if cv == "" {
		cv, _ = values["puppetversion"].(string)
	}
	if cv == "" {
		cv = DefaultClientVersion
	}
	v["clientversion"] = cv
	v["clientnoop"] = o.Noop
	if o.AgentSpecifiedEnvironment != "" {
		v["agent_specified_environment"] = o.AgentSpecifiedEnvironment
	}
	doc := struct {
		Name       string         `json:"name"`
		Values     map[string]any `json:"values"`
		Timestamp  string         `json:"timestamp"`
		Expiration string         `json:"expiration"`
	}{certname, v, rubyISO8601(now), rubyISO8601(now.Add(ttl))}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("the facts cannot be sent as JSON: %w", err)
	}
	return b, nil
}

// sanitize is Puppet's Puppet::Node::Facts#sanitize_fact for the values
// facts hold: a null inside a fact becomes "" (nil.to_s); hashes and
// arrays are copied, the caller's left as they are.
func sanitize(v any) any {
	switch x := v.(type) {
	case nil:
		return ""
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = sanitize(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = sanitize(e)
		}
		return out
	}
	return v
}

// rubyISO8601 is Ruby's Time#iso8601(9): 2026-11-26T19:17:55.800999974+00:00.
func rubyISO8601(t time.Time) string {
	return t.Format("2006-01-02T15:04:05.000000000-07:00")
}
