package host

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The IP addresses Puppet's host type accepts and refuses, at the edges
// of its IPv6 expression (the number of groups around `::`, an IPv4
// address in the last two groups, the zone index), and of IPv4.
func TestValidateIP(t *testing.T) {
	for ip, ok := range map[string]bool{
		"10.0.0.5": true, "255.255.255.255": true, "0.0.0.0": true,
		"256.0.0.1": false, "10.0.0": false, "10.0.0.5.6": false, "1e.0.0.1": false,

		"::": true, "::1": true, "1::": true, "fe80::1": true, "FE80::ABCD": true,
		"1:2:3:4:5:6:7:8": true, "1:2:3:4:5:6:7::": true, "::2:3:4:5:6:7:8": true,
		"1::8": true, "1:2:3:4::5:6:7": true, "1:2:3:4:5::6:7": true,
		"1:2:3:4:5:6:7:8:9": false, "1:2:3:4:5:6:7": false, "1:2:3:4:5:6::7:8": false,
		"1::2::3": false, ":1:2": false, "12345::1": false, "g::1": false, ":::": false,

		"::ffff:10.0.0.1": true, "::10.0.0.1": true, "1:2:3:4:5:6:10.0.0.1": true,
		"1:2:3:4:5::10.0.0.1": true, "1:2:3:4::5:10.0.0.1": true, "1::2:3:4:5:10.0.0.1": true,
		"1:2:3:4:5:6:7:10.0.0.1": false, "1:2:3:4:5::6:10.0.0.1": false, "::1:2:3:4:5:6:10.0.0.1": false,
		"::ffff:256.0.0.1": false, "::ffff:10.0.0.01": false, "::10.0.0": false,

		"fe80::1%eth0": true, "fe80::1%1": true, "fe80::1%": false, "fe80::1%a b": false,
		"10.0.0.5%eth0": false, " ::1": false, "::1 ": false, "::1\n": false,
	} {
		assert.Equal(t, ok, validateIP(ip) == nil, "%q", ip)
	}
}
