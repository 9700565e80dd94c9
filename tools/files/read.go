package files

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

// sniffLen is how much of a file is examined to tell text from binary.
const sniffLen = 8000

// maxLineShown cuts very long lines in a search's matches. A read shows
// lines whole; only a line longer than the read's byte cap is cut (see
// cutLine).
const maxLineShown = 4000

// cutLine cuts text, one line of a read that alone exceeds its byte cap,
// to about room bytes on a rune boundary, saying how much was left out.
func cutLine(text string, room int, dropped int) string {
	cut := min(max(room-80, 0), len(text))
	for cut > 0 && cut < len(text) && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return text[:cut] + fmt.Sprintf(" … [line cut: %d more bytes; it exceeds the read's byte cap]", len(text)-cut+dropped)
}

// binaryError means a file is not text.
type binaryError struct {
	Path string
	Size int64
}

func (e *binaryError) Error() string {
	return fmt.Sprintf("%s is a binary file (%d bytes); read shows text only. "+
		"Use bulk_file_transfer (download) to copy it, stat for its size, mode and owner, or search_files to find text in other files", e.Path, e.Size)
}

// isBinary reports whether b, the start of a file, looks binary: a NUL
// byte, or more than one byte in ten outside valid UTF-8.
func isBinary(b []byte) bool {
	if bytes.IndexByte(b, 0) >= 0 {
		return true
	}
	bad := 0
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			if len(b)-i < utf8.UTFMax && !utf8.FullRune(b[i:]) {
				break // a rune cut by the sniff window
			}
			bad++
		}
		i += n
	}
	return bad*10 > len(b)
}

// readResult is what read produced.
type readResult struct {
	text      string // numbered lines
	first     int    // first line number shown (negative for a tail)
	lines     int    // lines shown
	more      bool   // lines follow the last shown
	truncated bool   // the byte cap cut the output
}

// readLines reads lines offset (1-based) through offset+limit-1, numbered,
// at most maxBytes of output, streaming: a file costs what it takes to
// reach the lines shown. mask, if not nil, is applied to each line before
// it is cut, so a cut never shows part of a masked value.
func readLines(r io.Reader, offset, limit, maxBytes int, mask func(string) string) (res readResult, err error) {
	res.first = offset
	br := bufio.NewReaderSize(r, max(64<<10, maxBytes+1))
	var sb strings.Builder
	defer func() { res.text = sb.String() }()
	line := 0
	for {
		b, err := br.ReadSlice('\n')
		long, dropped := false, 0
		if errors.Is(err, bufio.ErrBufferFull) {
			// A line longer than the buffer (itself larger than the byte
			// cap): keep its start, skip the rest.
			if mask != nil {
				b = []byte(mask(string(b)))
			}
			b = append([]byte(nil), b...)
			long = true
			for errors.Is(err, bufio.ErrBufferFull) {
				var rest []byte
				rest, err = br.ReadSlice('\n')
				dropped += len(rest)
			}
		}
		if len(b) == 0 && err != nil {
			if err == io.EOF {
				return res, nil
			}
			return res, err
		}
		line++
		if line < offset {
			if err == io.EOF {
				return res, nil
			}
			continue
		}
		if res.lines == limit {
			res.more = true
			return res, nil
		}
		text := strings.TrimRight(string(b), "\n")
		text = strings.TrimSuffix(text, "\r")
		if mask != nil && !long {
			text = mask(text)
		}
		entry := fmt.Sprintf("%6d\t%s\n", line, text)
		if res.lines == 0 && (long || len(entry) > maxBytes) {
			// The first line alone exceeds the cap: show what fits, so
			// that the next read moves on.
			entry = fmt.Sprintf("%6d\t%s\n", line, cutLine(text, maxBytes-8, dropped))
			res.truncated = true
		}
		if sb.Len()+len(entry) > maxBytes && res.lines > 0 {
			res.truncated, res.more = true, true
			break
		}
		sb.WriteString(entry)
		res.lines++
		if err == io.EOF {
			break
		}
		if err != nil {
			return res, err
		}
	}
	return res, nil
}

// tailLines returns the last n lines of the size-byte file r, reading
// backwards from the end in chunks, so a multi-gigabyte log costs what its
// tail costs. At most maxBytes are read. mask, if not nil, is applied to
// each line before it is cut, and a first line the byte cap cut is never
// shown.
func tailLines(r io.ReaderAt, size int64, n, maxBytes int, mask func(string) string) (readResult, []byte, error) {
	const chunk = 64 << 10
	var buf []byte
	end := size
	newlines := 0
	truncated := false
	for end > 0 {
		start := max(end-chunk, 0)
		b := make([]byte, end-start)
		if _, err := r.ReadAt(b, start); err != nil && err != io.EOF {
			return readResult{}, nil, err
		}
		buf = append(b, buf...)
		end = start
		// Count the line breaks, not counting one that ends the file.
		newlines = bytes.Count(buf, []byte{'\n'})
		if len(buf) > 0 && buf[len(buf)-1] == '\n' {
			newlines--
		}
		if newlines >= n {
			break
		}
		if len(buf) >= maxBytes {
			truncated = true
			break
		}
	}
	text := strings.TrimSuffix(string(buf), "\n")
	lines := strings.Split(text, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	} else if end > 0 && (len(lines) > 1 || mask != nil) {
		lines = lines[1:] // the first is cut by the byte cap
	}
	raw := []byte(strings.Join(lines, "\n"))
	res := readResult{first: -len(lines), truncated: truncated, more: end > 0}
	// Keep the last lines that fit in maxBytes.
	entries := make([]string, 0, len(lines))
	total := 0
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSuffix(lines[i], "\r")
		if mask != nil {
			l = mask(l)
		}
		entry := fmt.Sprintf("%6d\t%s\n", i-len(lines), l)
		if len(entries) == 0 && len(entry) > maxBytes {
			entry = fmt.Sprintf("%6d\t%s\n", i-len(lines), cutLine(l, maxBytes-8, 0))
			res.truncated = true
		}
		if total+len(entry) > maxBytes && len(entries) > 0 {
			res.truncated, res.more = true, true
			break
		}
		total += len(entry)
		entries = append(entries, entry)
	}
	slices.Reverse(entries)
	res.lines = len(entries)
	res.first = -len(entries)
	var sb strings.Builder
	sb.Grow(total)
	for _, e := range entries {
		sb.WriteString(e)
	}
	res.text = sb.String()
	return res, raw, nil
}
