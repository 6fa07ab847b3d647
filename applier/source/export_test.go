package source

import "encoding/hex"

// SumBytes is the hex digest of b for a digest kind.
func SumBytes(kind string, b []byte) string {
	h := NewHash(kind)
	if h == nil {
		return ""
	}
	if IsLite(kind) && len(b) > LiteSize {
		b = b[:LiteSize]
	}
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}
