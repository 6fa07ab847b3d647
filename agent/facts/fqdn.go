package facts

import (
	"context"
	"net"
	"os"
	"strings"
	"time"

	"github.com/pippet/pippet/internal/osfacts"
)

// Names is what the host's name facts ask of the system: a seam, so that
// a test can give the real lookups another host name or files.
type Names struct {
	// Hostname is gethostname(2).
	Hostname func() (string, error)
	// CanonName is getaddrinfo(3)'s AI_CANONNAME for a host name:
	// /etc/hosts (the first name of the line naming it), then DNS.
	CanonName func(ctx context.Context, host string) (string, error)
	// ResolvConf reads /etc/resolv.conf.
	ResolvConf func() ([]byte, error)
}

// SystemNames are the real ones. The canonical-name lookup is bounded to
// 2 s (an unreachable DNS server must not hold a run for its resolver's
// 5 s × attempts).
func SystemNames() Names {
	return Names{
		Hostname: os.Hostname,
		CanonName: func(ctx context.Context, host string) (string, error) {
			ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			return net.DefaultResolver.LookupCNAME(ctx, host)
		},
		ResolvConf: func() ([]byte, error) { return os.ReadFile("/etc/resolv.conf") },
	}
}

// HostNames is Facter 4's hostname resolver (facter/resolvers/hostname.rb):
// the host name is cut at its first dot into hostname and domain; without
// a dot, the host name's canonical name, when it has one other than
// itself, is the fqdn, and its part after the first dot the domain when
// it is HOSTNAME.DOMAIN; a domain still unknown is resolv.conf's first
// domain line, else its first search line's first entry. fqdn is the
// canonical name when there is one (even when it is not HOSTNAME.DOMAIN,
// as Facter), else hostname.domain, else hostname.
func HostNames(ctx context.Context, n Names) (hostname, domain, fqdn string) {
	host, _ := n.Hostname()
	hostname, domain, _ = strings.Cut(host, ".")
	if domain == "" && hostname != "" {
		if c, err := n.CanonName(ctx, hostname); err == nil {
			// Go's resolver answers the name fully qualified, with
			// getaddrinfo's trailing dot; Facter has none.
			c = strings.TrimSuffix(c, ".")
			if c != "" && c != hostname && net.ParseIP(c) == nil {
				fqdn = c
			}
		}
		if d, ok := strings.CutPrefix(fqdn, hostname+"."); ok && d != "" {
			domain = d
		}
	}
	if domain == "" {
		b, _ := n.ResolvConf()
		domain = osfacts.ResolvDomain(b)
	}
	switch {
	case fqdn != "":
	case hostname == "":
	case domain != "":
		fqdn = hostname + "." + domain
	default:
		fqdn = hostname
	}
	return hostname, domain, fqdn
}
