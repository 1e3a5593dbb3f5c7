package opfs

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"io"
	"strings"

	"github.com/a3s-lab/code-wasm/workspace"
)

// A record is one change, laid out little-endian:
//
//	0  u32 magic "A3SR"
//	4  u8  op
//	5  3 bytes zero
//	8  u32 len(a)      a: the path
//	12 u32 len(b)      b: the content (put) or the new path (rename)
//	16 i64 mtime, Unix nanoseconds
//	24 16 bytes        version hash (put), else zero
//	40 a, b
//	   u32 CRC-32C of everything before it
const (
	recMagic  = 0x52533341 // "A3SR" read little-endian
	headerLen = 40
	trailLen  = 4
	// maxField bounds one path or content, so a corrupt length cannot make
	// replay allocate gigabytes.
	maxField = 1 << 30
)

type op uint8

const (
	opPut op = iota + 1
	opRemove
	opMkdir
	opRename
	// opCheckpoint ends the rewrite of a compacted generation: the
	// generation counts only once this record is on disk.
	opCheckpoint
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

type record struct {
	op    op
	a     string
	b     []byte
	mtime int64
	ver   [16]byte
}

func (r *record) size() int64 { return int64(headerLen + len(r.a) + len(r.b) + trailLen) }

// appendTo encodes r at the end of buf.
func (r *record) appendTo(buf []byte) []byte {
	start := len(buf)
	var h [headerLen]byte
	binary.LittleEndian.PutUint32(h[0:], recMagic)
	h[4] = byte(r.op)
	binary.LittleEndian.PutUint32(h[8:], uint32(len(r.a)))
	binary.LittleEndian.PutUint32(h[12:], uint32(len(r.b)))
	binary.LittleEndian.PutUint64(h[16:], uint64(r.mtime))
	copy(h[24:], r.ver[:])
	buf = append(buf, h[:]...)
	buf = append(buf, r.a...)
	buf = append(buf, r.b...)
	return binary.LittleEndian.AppendUint32(buf, crc32.Checksum(buf[start:], castagnoli))
}

// errTorn marks the end of the valid log: a record cut short, or bytes
// that are not a record (a crash mid-write). Replay stops there.
var errTorn = errors.New("torn record")

// readRecord decodes the next record. It returns io.EOF at a clean end and
// errTorn for anything that is not a whole, valid record.
func readRecord(br *bufio.Reader) (record, error) {
	var h [headerLen]byte
	if _, err := io.ReadFull(br, h[:]); err != nil {
		if err == io.EOF {
			return record{}, io.EOF
		}
		return record{}, errTorn
	}
	if binary.LittleEndian.Uint32(h[0:]) != recMagic {
		return record{}, errTorn
	}
	la, lb := binary.LittleEndian.Uint32(h[8:]), binary.LittleEndian.Uint32(h[12:])
	o := op(h[4])
	if la > maxField || lb > maxField || o < opPut || o > opCheckpoint {
		return record{}, errTorn
	}
	body := make([]byte, int(la)+int(lb)+trailLen)
	if _, err := io.ReadFull(br, body); err != nil {
		return record{}, errTorn
	}
	crc := crc32.Update(crc32.Checksum(h[:], castagnoli), castagnoli, body[:la+lb])
	if crc != binary.LittleEndian.Uint32(body[la+lb:]) {
		return record{}, errTorn
	}
	r := record{op: o, a: string(body[:la]), mtime: int64(binary.LittleEndian.Uint64(h[16:]))}
	if lb > 0 {
		r.b = body[la : la+lb : la+lb]
	}
	copy(r.ver[:], h[24:40])
	return r, nil
}

// versionBytes turns a workspace.Version made by VersionOf back into its
// 16 hash bytes.
func versionBytes(v workspace.Version) [16]byte {
	var out [16]byte
	hex.Decode(out[:], []byte(strings.TrimPrefix(string(v), "sha256:")))
	return out
}

func versionString(b [16]byte) workspace.Version {
	return workspace.Version("sha256:" + hex.EncodeToString(b[:]))
}
