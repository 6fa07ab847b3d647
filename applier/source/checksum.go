package source

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"strings"
)

// LiteSize is how many leading bytes the "lite" checksum kinds hash.
const LiteSize = 512

// Checksum kinds, as Puppet names them.
const (
	MD5        = "md5"
	MD5Lite    = "md5lite"
	SHA1       = "sha1"
	SHA1Lite   = "sha1lite"
	SHA224     = "sha224"
	SHA256     = "sha256"
	SHA256Lite = "sha256lite"
	SHA384     = "sha384"
	SHA512     = "sha512"
	MTime      = "mtime"
	CTime      = "ctime"
	None       = "none"
)

// Kinds lists every checksum kind in Puppet's order.
var Kinds = []string{MD5, MD5Lite, SHA256, SHA256Lite, SHA384, SHA512, SHA224, SHA1, SHA1Lite, MTime, CTime, None}

// IsDigest reports whether kind hashes content (as opposed to the time
// kinds and none).
func IsDigest(kind string) bool {
	switch kind {
	case MTime, CTime, None, "":
		return false
	}
	return NewHash(kind) != nil
}

// IsLite reports whether kind hashes only the first LiteSize bytes.
func IsLite(kind string) bool { return strings.HasSuffix(kind, "lite") }

// NewHash returns a fresh hash for a digest kind (lite kinds use their
// full algorithm; the caller limits the input), or nil for a kind that is
// not a digest.
func NewHash(kind string) hash.Hash {
	switch kind {
	case MD5, MD5Lite:
		return md5.New()
	case SHA1, SHA1Lite:
		return sha1.New()
	case SHA224:
		return sha256.New224()
	case SHA256, SHA256Lite:
		return sha256.New()
	case SHA384:
		return sha512.New384()
	case SHA512:
		return sha512.New()
	}
	return nil
}

// HexLen is the length of a hex digest of kind (0 for non-digests).
func HexLen(kind string) int {
	h := NewHash(kind)
	if h == nil {
		return 0
	}
	return 2 * h.Size()
}

// ValidHex reports whether v is a well-formed hex digest for kind.
func ValidHex(kind, v string) bool {
	if len(v) != HexLen(kind) {
		return false
	}
	_, err := hex.DecodeString(v)
	return err == nil
}

// Format renders a digest the way Puppet prints checksums: {sha256}hex.
func Format(kind, hexsum string) string { return "{" + kind + "}" + hexsum }

// SumString is SumBytes for a string, without copying large strings twice.
func SumString(kind, s string) string {
	h := NewHash(kind)
	if h == nil {
		return ""
	}
	if IsLite(kind) && len(s) > LiteSize {
		s = s[:LiteSize]
	}
	_, _ = io.WriteString(h, s)
	return hex.EncodeToString(h.Sum(nil))
}

// SumReader streams r through the digest of kind (only its first LiteSize
// bytes for the lite kinds) and returns the hex digest.
func SumReader(kind string, r io.Reader) (string, error) {
	h := NewHash(kind)
	if h == nil {
		return "", fmt.Errorf("checksum %q is not a content digest", kind)
	}
	if IsLite(kind) {
		r = io.LimitReader(r, LiteSize)
	}
	if _, err := io.Copy(h, r); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Strength orders the digests an HTTP server may offer, strongest first.
var Strength = []string{SHA512, SHA384, SHA256, SHA224, SHA1, MD5}
