package values

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// Checksum returns the hex SHA-256 of v's canonical JSON encoding: map keys
// sorted (encoding/json sorts them), no insignificant whitespace. Equal trees
// give equal checksums whatever their map iteration order; float64(1) and
// int(1) encode, and so hash, the same; so do nil and empty Values.
//
// A tree JSON cannot encode (NaN, infinities, channels) never comes from this
// package's decoders; for one, the checksum covers Go's %#v formatting
// instead, which is deterministic for maps but can never equal the checksum
// of an encodable tree.
func Checksum(v any) string {
	if m, ok := asMap(v); ok && m == nil {
		v = map[string]any{} // nil and empty Values mean the same
	}
	data, err := json.Marshal(v)
	if err != nil {
		data = fmt.Appendf([]byte("unencodable:"), "%#v", v)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
