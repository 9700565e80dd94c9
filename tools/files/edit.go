package files

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/textsafe"
	"github.com/rigout/rigout/tools/internal/family"
)

// maxDiffLines bounds the diff an edit returns.
const maxDiffLines = 200

func (o *op) edit(ctx context.Context) (*mcp.CallToolResult, error) {
	if res := o.f.judge(ctx, o.call, o.host, "tee", "--", o.path); res != nil {
		return res, nil
	}
	f, err := o.fsys.Open(o.path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if fi.Size() > o.f.cfg.MaxEditBytes {
		f.Close()
		return nil, fmt.Errorf("the file is %d bytes; edit rewrites files up to %d bytes: use write", fi.Size(), o.f.cfg.MaxEditBytes)
	}
	old, err := io.ReadAll(io.LimitReader(f, o.f.cfg.MaxEditBytes+1))
	f.Close()
	if err != nil {
		return nil, err
	}
	if isBinary(old[:min(len(old), sniffLen)]) {
		return nil, &binaryError{Path: o.path, Size: fi.Size()}
	}
	from, fromUsed, err := o.cs.substitute("old_string", o.a.OldString)
	if err != nil {
		return family.Invalid(o.call, "%v: nothing was changed", err)
	}
	to, toUsed, err := o.cs.substitute("new_string", *o.a.NewString)
	if err != nil {
		return family.Invalid(o.call, "%v: nothing was changed", err)
	}
	// Keep the file's line endings: an old_string typed with \n matches
	// a CRLF file, and the replacement is written with CRLF.
	if bytes.Contains(old, []byte("\r\n")) && !strings.Contains(from, "\r\n") && strings.Contains(from, "\n") {
		from = strings.ReplaceAll(from, "\n", "\r\n")
		to = strings.ReplaceAll(strings.ReplaceAll(to, "\r\n", "\n"), "\n", "\r\n")
	}
	text := string(old)
	n := strings.Count(text, from)
	shown := text // what the caller may see of the file
	if o.cs.maskFunc() != nil {
		shown = o.cs.redact(text)
		// Without a placeholder, old_string must match the text as the
		// caller sees it, masked: else matching would test guesses at a
		// credential. Such a call gets the answer of no match.
		if !fromUsed && strings.Count(shown, from) != n {
			n = 0
		}
	}
	switch {
	case n == 0:
		o.call.Outcome.Error = "no match"
		return rigout.ErrorResult("%s", noMatch(o.path, shown, o.a.OldString)), nil
	case n > 1 && !o.a.ReplaceAll:
		o.call.Outcome.Error = fmt.Sprintf("%d matches", n)
		return rigout.ErrorResult("%s", manyMatches(o.path, text, from, n)), nil
	}
	var updated string
	if o.a.ReplaceAll {
		updated = strings.ReplaceAll(text, from, to)
	} else {
		updated = strings.Replace(text, from, to, 1)
	}
	// The file must still be what was read: a change made meanwhile is
	// refused rather than overwritten.
	read := sha256.Sum256(old)
	if o.a.ExpectedSHA256 != "" && o.a.ExpectedSHA256 != hex.EncodeToString(read[:]) {
		return nil, &mismatchError{Path: o.path, Expected: o.a.ExpectedSHA256, Actual: hex.EncodeToString(read[:])}
	}
	pub, err := publish(o.fsys, o.path, strings.NewReader(updated), publishOptions{expectedSHA256: hex.EncodeToString(read[:])})
	if err != nil {
		return nil, err
	}
	if toUsed {
		o.f.written.remember(o.host, o.path, o.cs.aliasesUsed(*o.a.NewString))
	}
	o.detail(pub)
	o.call.Outcome.Detail[audit.DetailReplacements] = fmt.Sprint(n)
	diff := unifiedDiff(o.path, o.cs.redact(text), o.cs.redact(updated))
	sha := "sha256 " + pub.SHA256
	if o.holdsCredential() {
		sha = "sha256 withheld (the file holds a credential)"
	}
	return rigout.TextResult(fmt.Sprintf("edited %s: %d replacement(s); %s%s\n%s",
		o.path, n, sha, o.via(), textsafe.Text([]byte(diff)))), nil
}

// splitLines splits text into lines without their endings.
func splitLines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// noMatch explains a failed match and shows the lines closest to the
// first line of old_string.
func noMatch(p, text, want string) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "edit %s: old_string was not found (no match); nothing was changed.", p)
	lines := splitLines(text)
	first := strings.TrimSpace(splitLines(want)[0])
	if norm(text) != "" && strings.Contains(norm(text), norm(want)) {
		sb.WriteString(" It matches if whitespace is ignored: copy the indentation exactly (tabs vs spaces, trailing spaces).")
	}
	type cand struct {
		line  int
		score float64
	}
	var best []cand
	for i, l := range lines {
		s := similarity(strings.TrimSpace(l), first)
		if s <= 0.3 {
			continue
		}
		best = append(best, cand{i, s})
	}
	// Keep the three best, in file order.
	for i := 0; i < len(best); i++ {
		for j := i + 1; j < len(best); j++ {
			if best[j].score > best[i].score {
				best[i], best[j] = best[j], best[i]
			}
		}
	}
	best = best[:min(3, len(best))]
	if len(best) == 0 {
		sb.WriteString(" No line resembles its first line; read the file again.")
		return sb.String()
	}
	sb.WriteString("\nClosest lines to its first line:\n")
	for _, c := range best {
		fmt.Fprintf(&sb, "%6d\t%s\n", c.line+1, lines[c.line])
	}
	return sb.String()
}

// manyMatches names where old_string matches.
func manyMatches(p, text, from string, n int) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "edit %s: old_string matches %d times; nothing was changed. "+
		"Add surrounding lines to make it unique, or set replace_all. Matches start at lines:", p, n)
	off, shown := 0, 0
	for shown < 10 {
		i := strings.Index(text[off:], from)
		if i < 0 {
			break
		}
		line := strings.Count(text[:off+i], "\n") + 1
		fmt.Fprintf(&sb, " %d", line)
		off += i + len(from)
		shown++
	}
	if n > shown {
		sb.WriteString(" …")
	}
	return sb.String()
}

// norm drops all whitespace.
func norm(s string) string {
	return strings.Join(strings.Fields(s), "")
}

// similarity is the Dice coefficient of the two strings' byte bigrams.
func similarity(a, b string) float64 {
	if a == "" || b == "" {
		return 0
	}
	if a == b {
		return 1
	}
	if len(a) < 2 || len(b) < 2 {
		return 0
	}
	grams := map[string]int{}
	for i := 0; i+1 < len(a); i++ {
		grams[a[i:i+2]]++
	}
	common := 0
	for i := 0; i+1 < len(b); i++ {
		if grams[b[i:i+2]] > 0 {
			grams[b[i:i+2]]--
			common++
		}
	}
	return 2 * float64(common) / float64(len(a)+len(b)-2)
}

// unifiedDiff renders one hunk covering every changed line of a and b,
// with three lines of context, in unified format.
func unifiedDiff(name, a, b string) string {
	al, bl := splitLines(a), splitLines(b)
	pre := 0
	for pre < len(al) && pre < len(bl) && al[pre] == bl[pre] {
		pre++
	}
	suf := 0
	for suf < len(al)-pre && suf < len(bl)-pre && al[len(al)-1-suf] == bl[len(bl)-1-suf] {
		suf++
	}
	const ctx = 3
	start := max(pre-ctx, 0)
	aEnd := min(len(al)-suf+ctx, len(al))
	bEnd := min(len(bl)-suf+ctx, len(bl))
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n@@ -%d,%d +%d,%d @@\n", name, name, start+1, aEnd-start, start+1, bEnd-start)
	lines := 0
	emit := func(prefix, l string) {
		if lines == maxDiffLines {
			sb.WriteString("[diff cut at 200 lines]\n")
		}
		if lines >= maxDiffLines {
			lines++
			return
		}
		sb.WriteString(prefix + l + "\n")
		lines++
	}
	for i := start; i < pre; i++ {
		emit(" ", al[i])
	}
	for i := pre; i < len(al)-suf; i++ {
		emit("-", al[i])
	}
	for i := pre; i < len(bl)-suf; i++ {
		emit("+", bl[i])
	}
	for i := len(al) - suf; i < aEnd; i++ {
		emit(" ", al[i])
	}
	return sb.String()
}
