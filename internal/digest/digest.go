package digest

import "encoding/binary"

// The first 32 bits of the fractional parts of the cube roots of the first
// 64 primes (FIPS 180-4 §4.2.2).
var k = [64]uint32{
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
}

// The initial hash value (FIPS 180-4 §5.3.3).
var initial = [8]uint32{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19}

// sum256 returns the SHA-256 checksum of data, as crypto/sha256.Sum256.
func sum256(data []byte) [32]byte {
	st := initial
	whole := len(data) - len(data)%64
	for off := 0; off < whole; off += 64 {
		compress(&st, data[off:off+64])
	}
	// Padding (§5.1.1): the rest of the message, one 1 bit, zeros, and the
	// message length in bits as the last 64 bits of one block or of two.
	var last [128]byte
	rest := copy(last[:], data[whole:])
	last[rest] = 0x80
	size := 64
	if rest+1+8 > 64 {
		size = 128
	}
	binary.BigEndian.PutUint64(last[size-8:size], uint64(len(data))*8)
	for off := 0; off < size; off += 64 {
		compress(&st, last[off:off+64])
	}
	var sum [32]byte
	for i := range st {
		binary.BigEndian.PutUint32(sum[i*4:], st[i])
	}
	return sum
}

func rotr(x uint32, n uint) uint32 { return x>>n | x<<(32-n) }

// compress folds one 64-byte block into the state (§6.2.2).
func compress(st *[8]uint32, blk []byte) {
	var w [64]uint32
	for t := 0; t < 16; t++ {
		w[t] = binary.BigEndian.Uint32(blk[t*4:])
	}
	for t := 16; t < 64; t++ {
		s0 := rotr(w[t-15], 7) ^ rotr(w[t-15], 18) ^ w[t-15]>>3
		s1 := rotr(w[t-2], 17) ^ rotr(w[t-2], 19) ^ w[t-2]>>10
		w[t] = s1 + w[t-7] + s0 + w[t-16]
	}
	a, b, c, d, e, f, g, h := st[0], st[1], st[2], st[3], st[4], st[5], st[6], st[7]
	for t := 0; t < 64; t++ {
		t1 := h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + (e&f ^ ^e&g) + k[t] + w[t]
		t2 := (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + (a&b ^ a&c ^ b&c)
		h = g
		g = f
		f = e
		e = d + t1
		d = c
		c = b
		b = a
		a = t1 + t2
	}
	st[0] += a
	st[1] += b
	st[2] += c
	st[3] += d
	st[4] += e
	st[5] += f
	st[6] += g
	st[7] += h
}
