package validate

import (
	"strings"
)

// outSpec describes a program that writes or deletes files through its
// options or operands, beyond the ones with their own handler (cp, dd, tee,
// sed, …). The table is seeded like the destructive table: each row says
// which options and operands are written, rewritten in place, or replaced.
type outSpec struct {
	syn       optSyntax
	outShort  string   // short options whose value is a file written (sort -o)
	outLong   []string // long options whose value is a file written
	dashOut   []string // single-dash long options whose next word is written (openssl -out)
	opOut     int      // the operand (1-based) that is written: uniq IN OUT, patch FILE
	prefixOut int      // the operand that is a prefix of the files written (split IN PREFIX)
	prefixOpt string   // short option whose value is such a prefix (csplit -f)
	filter    []string // long options whose value is a shell command (split --filter)
	inPlace   bool     // every operand is rewritten in place (dos2unix, strip) unless an output option is given
	inFlag    string   // short flags with which the operands are rewritten in place (yq -i)
	inLong    []string
	replaces  bool   // the operands are replaced by an output (gzip FILE makes FILE.gz)
	keep      string // short flags that keep the operands (gzip -k, -c)
	keepLong  []string
	delFlag   string // when set, the operands are replaced only with these flags (zstd --rm)
	delLong   []string
	rec       string // short flags that recurse into directories
	recLong   []string
	reads     bool // the operands are also read: refuse raw devices (gzip /dev/sda)
}

var gzipLike = outSpec{
	syn:      optSyntax{argShort: "SbTMFCo", argLong: []string{"suffix", "threads", "memlimit", "format", "check", "blocksize", "processes", "output"}},
	replaces: true, keep: "ckltV", keepLong: []string{"stdout", "to-stdout", "keep", "test", "list", "help", "version"},
	rec: "r", recLong: []string{"recursive"}, reads: true,
}

func keepOnly(s outSpec, delShort string, delLong ...string) outSpec {
	s.delFlag, s.delLong = delShort, delLong
	return s
}

func withOut(s outSpec, short string, long ...string) outSpec {
	s.outShort, s.outLong = short, long
	return s
}

// outSpecs is a constant table.
var outSpecs = map[string]outSpec{
	"sort":        {syn: optSyntax{argShort: "kotST", argLong: []string{"key", "output", "field-separator", "buffer-size", "temporary-directory", "compress-program", "files0-from", "parallel", "batch-size", "random-source"}}, outShort: "o", outLong: []string{"output"}, filter: []string{"compress-program"}},
	"uniq":        {syn: optSyntax{argShort: "fsw", argLong: []string{"skip-fields", "skip-chars", "check-chars"}}, opOut: 2},
	"sdiff":       {syn: optSyntax{argShort: "oIw", argLong: []string{"output", "ignore-matching-lines", "width", "diff-program", "tabsize"}}, outShort: "o", outLong: []string{"output"}, filter: []string{"diff-program"}},
	"pod2man":     {syn: optSyntax{argShort: "cdenqrsu", argLong: []string{"center", "date", "errors", "fixed", "fixedbold", "fixeditalic", "fixedbolditalic", "name", "quotes", "release", "section"}}, opOut: 2},
	"pod2text":    {syn: optSyntax{argShort: "iw", argLong: []string{"indent", "width", "errors", "margin", "quotes"}}, opOut: 2},
	"split":       {syn: optSyntax{argShort: "abClnt", argLong: []string{"suffix-length", "bytes", "line-bytes", "lines", "number", "separator", "additional-suffix", "filter"}}, prefixOut: 2, filter: []string{"filter"}},
	"csplit":      {syn: optSyntax{argShort: "bfn", argLong: []string{"suffix-format", "prefix", "digits"}}, prefixOpt: "f"},
	"iconv":       {syn: optSyntax{argShort: "fto", argLong: []string{"from-code", "to-code", "output"}}, outShort: "o", outLong: []string{"output"}},
	"gpg":         {syn: optSyntax{argShort: "oruR", argLong: []string{"output", "recipient", "local-user", "homedir", "default-key", "passphrase", "passphrase-file", "keyring"}}, outShort: "o", outLong: []string{"output"}},
	"gpg2":        {syn: optSyntax{argShort: "oruR", argLong: []string{"output", "recipient", "local-user", "homedir", "default-key", "passphrase", "passphrase-file", "keyring"}}, outShort: "o", outLong: []string{"output"}},
	"xxd":         {syn: optSyntax{argShort: "cglosCn", argLong: []string{"cols", "groupsize", "len", "seek", "name"}}, opOut: 2, reads: true},
	"openssl":     {dashOut: []string{"-out", "-keyout"}},
	"dos2unix":    {syn: optSyntax{argShort: "c", argLong: []string{"convmode"}}, inPlace: true},
	"unix2dos":    {syn: optSyntax{argShort: "c", argLong: []string{"convmode"}}, inPlace: true},
	"mac2unix":    {syn: optSyntax{argShort: "c", argLong: []string{"convmode"}}, inPlace: true},
	"unix2mac":    {syn: optSyntax{argShort: "c", argLong: []string{"convmode"}}, inPlace: true},
	"strip":       {syn: optSyntax{argShort: "oFIORKNTD", argLong: []string{"output-format", "input-target", "target", "remove-section", "keep-symbol", "strip-symbol"}}, inPlace: true, outShort: "o"},
	"yq":          {syn: optSyntax{argShort: "oIpe", argLong: []string{"output-format", "indent", "input-format"}}, inFlag: "i", inLong: []string{"inplace"}},
	"patch":       {syn: optSyntax{argShort: "pidoBrzDFVYg", argLong: []string{"strip", "input", "directory", "output", "prefix", "reject-file", "suffix", "ifdef", "fuzz", "version-control", "basename-prefix", "get", "quoting-style", "reject-format"}}, opOut: 1, outShort: "o", outLong: []string{"output"}},
	"cpio":        {syn: optSyntax{argShort: "OFIHMRECD", argLong: []string{"format", "file", "owner", "message", "directory"}}, outShort: "O"},
	"mkisofs":     {syn: optSyntax{argShort: "oVApPb"}, outShort: "o"},
	"genisoimage": {syn: optSyntax{argShort: "oVApPb"}, outShort: "o"},
	"xorrisofs":   {syn: optSyntax{argShort: "oVApPb"}, outShort: "o"},
	"e2image":     {syn: optSyntax{argShort: "bBo"}, opOut: 2},
	"ntfsclone":   {syn: optSyntax{argShort: "oO", argLong: []string{"output", "overwrite"}}, outShort: "oO", outLong: []string{"output", "overwrite"}},
	"pv":          {syn: optSyntax{argShort: "LsNiDBWRo", argLong: []string{"rate-limit", "size", "name", "interval", "delay-start", "buffer-size", "watchfd", "remote", "output", "format"}}, outShort: "o", outLong: []string{"output"}, reads: true},
	"gzip":        gzipLike,
	"gunzip":      gzipLike,
	"bzip2":       gzipLike,
	"bunzip2":     gzipLike,
	"xz":          gzipLike,
	"unxz":        gzipLike,
	"lzma":        gzipLike,
	"unlzma":      gzipLike,
	"lzip":        gzipLike,
	"plzip":       gzipLike,
	"pigz":        gzipLike,
	"unpigz":      gzipLike,
	"pbzip2":      gzipLike,
	"compress":    gzipLike,
	"uncompress":  gzipLike,
	"zstd":        withOut(keepOnly(gzipLike, "", "rm"), "o"),
	"unzstd":      withOut(keepOnly(gzipLike, "", "rm"), "o"),
	"lz4":         func() outSpec { s := keepOnly(gzipLike, "", "rm"); s.opOut = 2; return s }(),
	"brotli":      withOut(keepOnly(gzipLike, "j", "rm"), "o", "output"),
	"lzop":        withOut(keepOnly(gzipLike, "U", "delete"), "o", "output"),
}

// outputs checks a program of outSpecs.
func (w *walker) outputs(inv *invocation, name string) {
	spec := outSpecs[name]
	args := inv.args()
	if onlyInfo(args) {
		return
	}
	p := parseArgs(args, &spec.syn)
	if spec.reads && !inv.dyn {
		for _, f := range p.ops {
			w.readTarget(inv, f, name)
		}
	}
	out := false
	for _, v := range p.vals {
		short := len(v.name) == 1
		switch {
		case short && strings.Contains(spec.outShort, v.name) || !short && oneOfPrefix(v.name, spec.outLong):
			out = true
			w.writeTarget(inv, v.val, name+" -"+v.name)
		case short && spec.prefixOpt != "" && v.name == spec.prefixOpt:
			w.writeTarget(inv, prefixField(v.val), name+" -"+v.name)
		case !short && oneOfPrefix(v.name, spec.filter):
			w.payload(inv, v.val, name+" --"+v.name+" command", nil, true)
		}
	}
	for i, a := range args {
		if a.exact() && oneOf(a.s, spec.dashOut...) && i+1 < len(args) {
			w.writeTarget(inv, args[i+1], name+" "+a.s)
		}
	}
	ops := p.ops
	if spec.opOut > 0 && len(ops) >= spec.opOut {
		w.writeTarget(inv, ops[spec.opOut-1], name)
	}
	if spec.prefixOut > 0 && len(ops) >= spec.prefixOut {
		w.writeTarget(inv, prefixField(ops[spec.prefixOut-1]), name)
	}
	if spec.inPlace && !out || spec.inFlag != "" && p.has(spec.inFlag, spec.inLong...) {
		newfile := strings.HasSuffix(name, "dos") || strings.HasSuffix(name, "unix") || strings.HasSuffix(name, "mac")
		newfile = newfile && p.has("n", "newfile")
		for i, f := range ops {
			if newfile && i%2 == 0 {
				continue // dos2unix -n IN OUT reads IN
			}
			w.writeTarget(inv, f, name)
		}
	}
	if !spec.replaces || p.has(spec.keep, spec.keepLong...) || out {
		return
	}
	if (spec.delFlag != "" || len(spec.delLong) > 0) && !p.has(spec.delFlag, spec.delLong...) {
		return
	}
	rec := p.has(spec.rec, spec.recLong...) || inv.rec
	for i, f := range ops {
		if spec.opOut > 0 && i == spec.opOut-1 {
			continue
		}
		if f.exact() && f.s == "-" {
			continue
		}
		w.replaceTarget(inv, name, f, rec)
	}
}

// prefixField is the pattern of the files written under a prefix: PREFIX
// and at least one more byte.
func prefixField(f field) field {
	toks := f.toks
	if f.exact() {
		toks = litToks(f.s)
	}
	toks = append(append(toks[:len(toks):len(toks)], ptok{kind: tAny}), ptok{kind: tStar})
	return field{toks: toks, s: f.show() + "*", pos: f.pos}
}

// replaceTarget checks an operand that a command replaces by another file
// (gzip FILE leaves FILE.gz): the original is gone.
func (w *walker) replaceTarget(inv *invocation, cmd string, f field, rec bool) {
	if rec {
		w.deleteTarget(inv, cmd+" -r", f, true, false)
		return
	}
	t := w.target(f)
	if t.none() {
		return
	}
	if h, ok := w.protectedHit(t); ok && h.all {
		w.report(inv, RuleRecursiveDeleteRoot, cmd+" would replace every file of the protected root "+showPath(h.root)+" ("+f.show()+at(f.pos)+")")
		return
	}
	if c, ok := w.criticalHit(t); ok {
		w.report(inv, RuleCriticalFileWrite, cmd+" replaces the critical file "+c+" by another file"+at(f.pos))
	}
}

// zip -m, 7z -sdel and rar m delete the files they archive.
func (w *walker) archiver(inv *invocation, name string) {
	args := inv.args()
	var ops []field
	move, rec := false, name != "zip"
	switch name {
	case "zip":
		for i := 0; i < len(args); i++ {
			a := args[i]
			if !a.exact() || !strings.HasPrefix(a.s, "-") || a.s == "-" {
				ops = append(ops, a)
				continue
			}
			switch {
			case a.s == "--move":
				move = true
			case a.s == "--recurse-paths":
				rec = true
			case oneOf(a.s, "-x", "-i", "--exclude", "--include"):
				// Patterns follow up to the next option.
				for i+1 < len(args) && !(args[i+1].exact() && strings.HasPrefix(args[i+1].s, "-")) {
					i++
				}
			case oneOf(a.s, "-b", "-n", "-t", "-tt", "-P", "-Z", "-s", "-O", "--out", "--temp-path", "--password"):
				i++
			case !strings.HasPrefix(a.s, "--"):
				move = move || strings.ContainsRune(a.s, 'm')
				rec = rec || strings.ContainsAny(a.s, "rR")
			}
		}
		if len(ops) > 0 {
			ops = ops[1:] // the archive
		}
	case "7z", "7za", "7zr":
		p := parseArgs(args, &optSyntax{})
		for _, a := range args {
			move = move || a.exact() && a.s == "-sdel"
		}
		if len(p.ops) >= 2 && p.ops[0].exact() && oneOf(p.ops[0].s, "a", "u") {
			ops = p.ops[2:]
		}
	case "rar":
		p := parseArgs(args, &optSyntax{})
		rec = p.hasShort('r')
		if len(p.ops) >= 2 && p.ops[0].exact() {
			move = oneOf(p.ops[0].s, "m", "mf")
			for _, a := range args {
				move = move || a.exact() && oneOf(a.s, "-df", "-dr")
			}
			ops = p.ops[2:]
		}
	}
	if !move {
		return
	}
	label := name + " -m"
	if name != "zip" {
		label = name + " (deleting what it archives)"
	}
	for _, f := range ops {
		if rec {
			w.deleteTarget(inv, label, f, true, false)
		} else {
			w.replaceTarget(inv, label, f, false)
		}
	}
}

// rename (util-linux or perl) renames its file operands.
func (w *walker) rename(inv *invocation, name string) {
	p := parseArgs(inv.args(), &optSyntax{argShort: "e", argLong: []string{"expr"}})
	ops := p.ops
	if _, ok := p.val('e', "expr"); !ok && len(ops) > 0 {
		ops = ops[1:]
	}
	for _, s := range ops {
		t := w.target(s)
		if t.none() {
			continue
		}
		if h, ok := w.protectedHit(t); ok {
			w.report(inv, RuleMoveRoot, name+" would rename the protected root "+showPath(h.root)+" ("+s.show()+at(s.pos)+")")
			continue
		}
		if c, ok := w.criticalHit(t); ok {
			w.report(inv, RuleCriticalFileWrite, name+" would rename the critical file "+c+at(s.pos))
		}
	}
}
