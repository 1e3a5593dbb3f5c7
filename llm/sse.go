package llm

import (
	"bytes"
	"errors"
	"io"

	"github.com/a3s-lab/code-wasm/internal/scan"
)

// maxEventBytes bounds one SSE event's data; a larger one is a malformed
// stream, not a reason to grow memory without end.
const maxEventBytes = 16 << 20

var errEventTooLarge = errors.New("an SSE event is larger than 16 MiB")

// sseReader splits a text/event-stream into events by the WHATWG rules:
// lines end in CRLF, LF or CR; "field: value" with one optional space after
// the colon; lines starting with ":" are comments (keep-alives); "data"
// lines join with "\n"; a blank line dispatches; an event without data is
// not dispatched; "id" and "retry" are ignored.
type sseReader struct {
	r          io.Reader
	buf        []byte // buf[start:end] is read and not yet consumed
	start, end int
	err        error  // the reader's error, once it returned one
	skipLF     bool   // the last line ended in a CR at the end of buf
	event      []byte // the current event's name
	name       string // the last name returned, reused while it repeats
	data       []byte // the current event's data, joined
}

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{r: r, buf: make([]byte, 4<<10)}
}

// next returns the next event's name ("" for unnamed) and data, valid until
// the following call. It returns io.EOF at the end of the stream; an event
// whose blank line never came is dispatched if its last line was complete.
func (s *sseReader) next() (event string, data []byte, err error) {
	s.event, s.data = s.event[:0], s.data[:0]
	hasData := false
	for {
		line, err := s.readLine()
		if err == io.EOF && hasData {
			return s.eventName(), s.data, nil
		}
		if err != nil {
			return "", nil, err
		}
		if len(line) == 0 {
			if hasData {
				return s.eventName(), s.data, nil
			}
			s.event = s.event[:0]
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "data":
			if hasData {
				s.data = append(s.data, '\n')
			}
			if len(s.data)+len(value) > maxEventBytes {
				return "", nil, errEventTooLarge
			}
			s.data = append(s.data, value...)
			hasData = true
		case "event":
			s.event = append(s.event[:0], value...)
		}
	}
}

// eventName is the current event's name without allocating when it
// repeats the last one (most events of a stream share a few names).
func (s *sseReader) eventName() string {
	if string(s.event) != s.name {
		s.name = string(s.event)
	}
	return s.name
}

// readLine returns the next line without its ending, valid until the next
// call; an unterminated last line is dropped at EOF (a truncated line is
// not an event).
func (s *sseReader) readLine() ([]byte, error) {
	for {
		win := s.buf[s.start:s.end]
		if s.skipLF && len(win) > 0 {
			s.skipLF = false
			if win[0] == '\n' {
				s.start++
				win = win[1:]
			}
		}
		lf := scan.IndexByte(win, '\n')
		head := win
		if lf >= 0 {
			head = win[:lf]
		}
		if cr := scan.IndexByte(head, '\r'); cr >= 0 {
			switch {
			case cr+1 < len(win):
				s.start += cr + 1
				if win[cr+1] == '\n' {
					s.start++
				}
			default:
				s.start += cr + 1
				s.skipLF = true
			}
			return win[:cr], nil
		}
		if lf >= 0 {
			s.start += lf + 1
			return win[:lf], nil
		}
		if s.err != nil {
			return nil, s.err
		}
		s.fill()
	}
}

// fill reads more into buf, moving the unconsumed rest to the front and
// growing buf when a line fills it (up to maxEventBytes).
func (s *sseReader) fill() {
	if s.start > 0 {
		s.end = copy(s.buf, s.buf[s.start:s.end])
		s.start = 0
	}
	if s.end == len(s.buf) {
		if len(s.buf) >= maxEventBytes {
			s.err = errEventTooLarge
			return
		}
		s.buf = append(s.buf, make([]byte, len(s.buf))...)
	}
	n, err := s.r.Read(s.buf[s.end:])
	s.end += n
	if err != nil {
		s.err = err
	}
}
