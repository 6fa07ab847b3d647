package ssl

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Object identifiers of a request.
var (
	oidExtensionRequest   = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 14}
	oidMSExtensionRequest = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 311, 2, 1, 14}
	oidSubjectAltName     = asn1.ObjectIdentifier{2, 5, 29, 17}
	oidSHA256WithRSA      = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 1, 11}
	oidECDSAWithSHA256    = asn1.ObjectIdentifier{1, 2, 840, 10045, 4, 3, 2}
)

// shortNames are the names csr_attributes.yaml may use instead of an
// OID: Puppet's registered extensions (Puppet::SSL::Oids) and the
// attributes of PKCS #9 that OpenSSL knows by name.
var shortNames = map[string]string{
	"challengePassword": "1.2.840.113549.1.9.7",
	"unstructuredName":  "1.2.840.113549.1.9.2",
	"extReq":            "1.2.840.113549.1.9.14",
	"msExtReq":          "1.3.6.1.4.1.311.2.1.14",
	"subjectAltName":    "2.5.29.17",

	"puppetlabs":    "1.3.6.1.4.1.34380",
	"ppCertExt":     "1.3.6.1.4.1.34380.1",
	"ppRegCertExt":  "1.3.6.1.4.1.34380.1.1",
	"ppPrivCertExt": "1.3.6.1.4.1.34380.1.2",
	"ppAuthCertExt": "1.3.6.1.4.1.34380.1.3",

	"pp_uuid": "1.3.6.1.4.1.34380.1.1.1", "pp_instance_id": "1.3.6.1.4.1.34380.1.1.2",
	"pp_image_name": "1.3.6.1.4.1.34380.1.1.3", "pp_preshared_key": "1.3.6.1.4.1.34380.1.1.4",
	"pp_cost_center": "1.3.6.1.4.1.34380.1.1.5", "pp_product": "1.3.6.1.4.1.34380.1.1.6",
	"pp_project": "1.3.6.1.4.1.34380.1.1.7", "pp_application": "1.3.6.1.4.1.34380.1.1.8",
	"pp_service": "1.3.6.1.4.1.34380.1.1.9", "pp_employee": "1.3.6.1.4.1.34380.1.1.10",
	"pp_created_by": "1.3.6.1.4.1.34380.1.1.11", "pp_environment": "1.3.6.1.4.1.34380.1.1.12",
	"pp_role": "1.3.6.1.4.1.34380.1.1.13", "pp_software_version": "1.3.6.1.4.1.34380.1.1.14",
	"pp_department": "1.3.6.1.4.1.34380.1.1.15", "pp_cluster": "1.3.6.1.4.1.34380.1.1.16",
	"pp_provisioner": "1.3.6.1.4.1.34380.1.1.17", "pp_region": "1.3.6.1.4.1.34380.1.1.18",
	"pp_datacenter": "1.3.6.1.4.1.34380.1.1.19", "pp_zone": "1.3.6.1.4.1.34380.1.1.20",
	"pp_network": "1.3.6.1.4.1.34380.1.1.21", "pp_securitypolicy": "1.3.6.1.4.1.34380.1.1.22",
	"pp_cloudplatform": "1.3.6.1.4.1.34380.1.1.23", "pp_apptier": "1.3.6.1.4.1.34380.1.1.24",
	"pp_hostname": "1.3.6.1.4.1.34380.1.1.25", "pp_owner": "1.3.6.1.4.1.34380.1.1.26",
	"pp_authorization": "1.3.6.1.4.1.34380.1.3.1", "pp_auth_role": "1.3.6.1.4.1.34380.1.3.13",
}

// parseOID reads a dotted OID or one of shortNames.
func parseOID(s string) (asn1.ObjectIdentifier, error) {
	if o, ok := shortNames[s]; ok {
		s = o
	}
	parts := strings.Split(s, ".")
	if len(parts) < 2 {
		return nil, fmt.Errorf("%q is neither an OID nor a known short name", s)
	}
	oid := make(asn1.ObjectIdentifier, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%q is neither an OID nor a known short name", s)
		}
		oid[i] = n
	}
	return oid, nil
}

// csrAttributes is csr_attributes.yaml: custom_attributes go into the
// request as attributes, extension_requests as requested extensions
// (Puppet's trusted facts once signed).
type csrAttributes struct {
	Custom     []keyValue
	Extensions []keyValue
}

type keyValue struct{ Key, Value string }

// loadCSRAttributes reads the file when it exists, as Puppet does: a
// mapping with at most custom_attributes and extension_requests.
func loadCSRAttributes(path string) (*csrAttributes, bool, error) {
	if path == "" {
		return &csrAttributes{}, false, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &csrAttributes{}, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("csr_attributes %s: %w", path, err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, false, fmt.Errorf("csr_attributes %s: %w", path, err)
	}
	out := &csrAttributes{}
	if len(doc.Content) == 0 {
		return out, true, nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, false, fmt.Errorf("invalid CSR attributes, expected instance of Hash, in %s", path)
	}
	var unexpected []string
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i].Value, root.Content[i+1]
		var into *[]keyValue
		switch k {
		case "custom_attributes":
			into = &out.Custom
		case "extension_requests":
			into = &out.Extensions
		default:
			unexpected = append(unexpected, strconv.Quote(k))
			continue
		}
		if v.Tag == "!!null" {
			continue
		}
		if v.Kind != yaml.MappingNode {
			return nil, false, fmt.Errorf("%s in %s must be a mapping of OIDs to values", k, path)
		}
		for j := 0; j+1 < len(v.Content); j += 2 {
			val := v.Content[j+1]
			if val.Kind != yaml.ScalarNode {
				return nil, false, fmt.Errorf("%s %s in %s: the value must be a string", k, v.Content[j].Value, path)
			}
			*into = append(*into, keyValue{v.Content[j].Value, val.Value})
		}
	}
	if len(unexpected) > 0 {
		return nil, false, fmt.Errorf("unexpected attributes [%s] in %q", strings.Join(unexpected, ", "), path)
	}
	return out, true, nil
}

// The ASN.1 structures of a PKCS #10 request (RFC 2986), built here
// because custom attributes are PrintableStrings, which crypto/x509 does
// not write.
type tbsRequest struct {
	Version    int
	Subject    asn1.RawValue
	PublicKey  asn1.RawValue
	Attributes []asn1.RawValue `asn1:"tag:0"`
}

type attribute struct {
	Type   asn1.ObjectIdentifier
	Values []asn1.RawValue `asn1:"set"`
}

type extension struct {
	ID       asn1.ObjectIdentifier
	Critical bool `asn1:"optional"`
	Value    []byte
}

type request struct {
	Info      asn1.RawValue
	Algorithm pkix.AlgorithmIdentifier
	Signature asn1.BitString
}

// makeCSR builds and signs the request of certname as Puppet's
// CertificateRequest#generate does: subject CN=certname; the custom
// attributes as PrintableStrings; the extension requests as UTF8Strings;
// with dns_alt_names a subjectAltName holding them and the certname
// (DNS: unless written IP:), sorted; signed with SHA-256.
func makeCSR(certname string, key crypto.Signer, altNames []string, attrs *csrAttributes) ([]byte, error) {
	subj, err := asn1.Marshal(pkix.Name{CommonName: certname}.ToRDNSequence())
	if err != nil {
		return nil, err
	}
	alg := pkix.AlgorithmIdentifier{Algorithm: oidSHA256WithRSA, Parameters: asn1.NullRawValue}
	switch key.Public().(type) {
	case *rsa.PublicKey:
	case *ecdsa.PublicKey:
		alg = pkix.AlgorithmIdentifier{Algorithm: oidECDSAWithSHA256}
	default:
		return nil, fmt.Errorf("Unsupported key '%T'", key)
	}
	pub, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return nil, err
	}
	var rawAttrs []asn1.RawValue
	for _, a := range attrs.Custom {
		oid, err := parseOID(a.Key)
		if err != nil {
			return nil, fmt.Errorf("Cannot create CSR with attribute %s: %w", a.Key, err)
		}
		if oid.Equal(oidExtensionRequest) || oid.Equal(oidMSExtensionRequest) {
			return nil, fmt.Errorf("Cannot specify CSR attribute %s: conflicts with internally used CSR attribute", a.Key)
		}
		// Tagged PrintableString whatever the characters, as Ruby's
		// OpenSSL::ASN1::PrintableString writes a challenge password.
		v := asn1.RawValue{Class: asn1.ClassUniversal, Tag: asn1.TagPrintableString, Bytes: []byte(a.Value)}
		b, err := asn1.Marshal(attribute{Type: oid, Values: []asn1.RawValue{v}})
		if err != nil {
			return nil, err
		}
		rawAttrs = append(rawAttrs, asn1.RawValue{FullBytes: b})
	}
	var exts []extension
	for _, e := range attrs.Extensions {
		oid, err := parseOID(e.Key)
		if err != nil {
			return nil, fmt.Errorf("Cannot create CSR with extension request %s: %w", e.Key, err)
		}
		if oid.Equal(oidSubjectAltName) {
			return nil, fmt.Errorf("Cannot specify CSR extension request %s: conflicts with internally used extension request", e.Key)
		}
		v, err := asn1.MarshalWithParams(e.Value, "utf8")
		if err != nil {
			return nil, err
		}
		exts = append(exts, extension{ID: oid, Value: v})
	}
	if len(altNames) > 0 {
		san, err := subjectAltName(certname, altNames)
		if err != nil {
			return nil, err
		}
		exts = append(exts, extension{ID: oidSubjectAltName, Value: san})
	}
	if len(exts) > 0 {
		seq, err := asn1.Marshal(exts)
		if err != nil {
			return nil, err
		}
		b, err := asn1.Marshal(attribute{Type: oidExtensionRequest, Values: []asn1.RawValue{{FullBytes: seq}}})
		if err != nil {
			return nil, err
		}
		rawAttrs = append(rawAttrs, asn1.RawValue{FullBytes: b})
	}
	info, err := asn1.Marshal(tbsRequest{
		Subject:    asn1.RawValue{FullBytes: subj},
		PublicKey:  asn1.RawValue{FullBytes: pub},
		Attributes: rawAttrs,
	})
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(info)
	sig, err := key.Sign(rand.Reader, sum[:], crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("signing the certificate request: %w", err)
	}
	der, err := asn1.Marshal(request{
		Info:      asn1.RawValue{FullBytes: info},
		Algorithm: alg,
		Signature: asn1.BitString{Bytes: sig, BitLength: len(sig) * 8},
	})
	if err != nil {
		return nil, err
	}
	// What the CA will read: parse and check it as it does.
	csr, err := x509.ParseCertificateRequest(der)
	if err != nil {
		return nil, fmt.Errorf("the certificate request made for %s: %w", certname, err)
	}
	if err := csr.CheckSignature(); err != nil {
		return nil, fmt.Errorf("CSR sign verification failed; you need to clean the certificate request for %s on the server", certname)
	}
	return der, nil
}

// subjectAltName encodes dns_alt_names and the certname as Puppet does:
// each name DNS: unless it says IP:, sorted and unique.
func subjectAltName(certname string, altNames []string) ([]byte, error) {
	seen := map[string]bool{}
	var names []string
	for _, n := range append(append([]string{}, altNames...), certname) {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if !strings.HasPrefix(n, "IP:") && !strings.HasPrefix(n, "DNS:") {
			n = "DNS:" + n
		}
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var gn []asn1.RawValue
	for _, n := range names {
		if ip, ok := strings.CutPrefix(n, "IP:"); ok {
			addr := net.ParseIP(ip)
			if addr == nil {
				return nil, fmt.Errorf("dns_alt_names: %q is not an IP address", ip)
			}
			if v4 := addr.To4(); v4 != nil {
				addr = v4
			}
			gn = append(gn, asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 7, Bytes: addr})
			continue
		}
		dns := strings.TrimPrefix(n, "DNS:")
		if !ia5(dns) {
			return nil, fmt.Errorf("dns_alt_names: %q is not an ASCII name", dns)
		}
		gn = append(gn, asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 2, Bytes: []byte(dns)})
	}
	return asn1.Marshal(gn)
}

func ia5(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
