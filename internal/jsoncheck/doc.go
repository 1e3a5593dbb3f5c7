// Package jsoncheck checks JSON that crosses from JavaScript into Go for
// what encoding/json would accept but silently change, or take too deep:
//
//   - a string that is not well-formed UTF-16: JSON.stringify writes a lone
//     surrogate as an escape (\ud800), and encoding/json decodes it as
//     U+FFFD, so two different JS strings ("a\ud800", "a\udc00", and
//     "a\ufffd" itself) would name one file;
//   - nesting deeper than MaxDepth objects and arrays, which JS code
//     walking the value (JSON.stringify, the package's own checks) can only
//     answer with a RangeError.
//
// Check is one pass over the bytes, without decoding. It is not a JSON
// validator: malformed JSON is left to the decoder.
package jsoncheck
