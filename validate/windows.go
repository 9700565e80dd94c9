package validate

import (
	"encoding/base64"
	"encoding/binary"
	"path"
	"strings"
	"unicode/utf16"
)

// Rules only the Windows policies use (CheckCmd, CheckPowerShell, and
// Policy.Check with Options.Dialect set to DialectCmd or
// DialectPowerShell). They are rows of the rule table like the others.
const (
	RuleRegistryDelete   = "registry-delete"    // reg delete HKLM\…, Remove-Item HKLM:\…
	RuleServiceDelete    = "service-delete"     // sc delete, Remove-Service
	RuleBootConfig       = "boot-config"        // bcdedit changes
	RuleShadowCopyDelete = "shadow-copy-delete" // vssadmin delete shadows, wmic shadowcopy delete, wbadmin delete
)

// windowsRoots are the protected roots of a Windows target, lower case,
// backslashed, without a trailing backslash; "c:" stands for every drive
// root. Variables are given as the paths they usually hold.
var windowsRoots = [...]string{
	`c:`, `c:\windows`, `c:\windows\system32`, `c:\windows\syswow64`, `c:\windows\winsxs`,
	`c:\program files`, `c:\program files (x86)`, `c:\programdata`, `c:\users`,
	`c:\users\~`, `c:\boot`, `c:\efi`, `c:\recovery`, `c:\system volume information`,
}

// windowsCritical are files whose deletion or replacement breaks the
// machine (registry hives, boot manager), lower case, "c:" for any drive.
var windowsCritical = [...]string{
	`c:\windows\system32\config\sam`, `c:\windows\system32\config\system`,
	`c:\windows\system32\config\security`, `c:\windows\system32\config\software`,
	`c:\windows\system32\config\default`, `c:\bootmgr`, `c:\windows\system32\ntoskrnl.exe`,
	`c:\windows\system32\winload.exe`, `c:\windows\system32\drivers\etc\hosts`,
}

// windowsVars are the environment variables that name protected roots,
// in both the cmd.exe (%VAR%) and the PowerShell ($env:VAR) spelling.
var windowsVars = map[string]string{
	"systemdrive": `c:`, "systemroot": `c:\windows`, "windir": `c:\windows`,
	"programfiles": `c:\program files`, "programfiles(x86)": `c:\program files (x86)`,
	"programdata": `c:\programdata`, "allusersprofile": `c:\programdata`,
	"userprofile": `c:\users\~`, "homedrive": `c:`, "public": `c:\users\public`,
	"home": `c:\users\~`,
}

// windowsPath normalises a path argument of a Windows command for
// comparison: quotes dropped, variables replaced, lower case, backslashes,
// any drive letter as c:, without trailing separators or "\*" / "\*.*"
// wildcards (which name every entry: all reports that). A path that holds a
// variable it does not know is reported as unknown.
func windowsPath(arg string) (p string, all, unknown bool) {
	p = strings.ToLower(strings.Trim(arg, `"'`))
	p = strings.ReplaceAll(p, "/", `\`)
	p = strings.TrimPrefix(p, `filesystem::`)
	p = strings.TrimPrefix(p, `microsoft.powershell.core\filesystem::`)
	// %VAR% and $env:VAR.
	for {
		i := strings.IndexByte(p, '%')
		j := -1
		if i >= 0 {
			j = strings.IndexByte(p[i+1:], '%')
		}
		if i < 0 || j < 0 {
			break
		}
		name := p[i+1 : i+1+j]
		v, ok := windowsVars[name]
		if !ok {
			unknown = true
			v = "?"
		}
		p = p[:i] + v + p[i+2+j:]
	}
	for _, pre := range []string{`${env:`, `$env:`} {
		for strings.Contains(p, pre) {
			i := strings.Index(p, pre)
			rest := p[i+len(pre):]
			n := strings.IndexFunc(rest, func(r rune) bool { return r == '\\' || r == '}' || r == ' ' })
			if n < 0 {
				n = len(rest)
			}
			name := rest[:n]
			v, ok := windowsVars[name]
			if !ok {
				unknown = true
				v = "?"
			}
			after := rest[n:]
			if pre == `${env:` {
				after = strings.TrimPrefix(after, "}")
			}
			p = p[:i] + v + after
		}
	}
	for _, h := range []string{`$home`, `~`} {
		if p == h || strings.HasPrefix(p, h+`\`) {
			p = `c:\users\~` + p[len(h):]
		}
	}
	if strings.Contains(p, "$") {
		unknown = true
	}
	// A drive letter stands for every drive; \\?\C:\ too.
	p = strings.TrimPrefix(p, `\\?\`)
	if len(p) >= 2 && p[1] == ':' && p[0] >= 'a' && p[0] <= 'z' {
		p = "c" + p[1:]
	} else if strings.HasPrefix(p, `\`) && !strings.HasPrefix(p, `\\`) {
		p = "c:" + p // \Windows is on the current drive
	}
	for {
		switch {
		case strings.HasSuffix(p, `\*.*`):
			p, all = p[:len(p)-4], true
		case strings.HasSuffix(p, `\*`):
			p, all = p[:len(p)-2], true
		case strings.HasSuffix(p, `\.`):
			p = p[:len(p)-2]
		case strings.HasSuffix(p, `\`) && len(p) > 0:
			p = p[:len(p)-1]
		case p == "c:*" || p == "c:*.*":
			p, all = "c:", true
		default:
			return p, all, unknown
		}
	}
}

// windowsRoot reports whether the normalised path p is a protected root.
func windowsRoot(p string) bool {
	for _, r := range windowsRoots {
		if p == r {
			return true
		}
		// c:\users\~ stands for every profile directory.
		if r == `c:\users\~` {
			if rest, ok := strings.CutPrefix(p, `c:\users\`); ok && rest != "" && !strings.Contains(rest, `\`) {
				return true
			}
		}
	}
	return false
}

func windowsCriticalFile(p string) bool {
	for _, c := range windowsCritical {
		if p == c {
			return true
		}
	}
	return false
}

// winCheck is one judgement of a Windows command line: the policy's
// compiled configuration and what was found so far.
type winCheck struct {
	cfg      *config
	dir      string  // the working directory, normalised by windowsPath; "" if unknown
	stdin    *string // the call's standard input, judged as code by a shell that reads it
	findings []winFinding
}

type winFinding struct {
	finding
	hint string
}

// deny reports a finding of rule, unless the policy switched the rule
// off. It returns allowed, so that the rest of the line is judged too:
// the decision names the finding of highest priority, as the POSIX
// checker's does.
func (j *winCheck) deny(rule, reason, hint string) Decision {
	a := j.cfg.action(rule)
	if a != Off {
		j.findings = append(j.findings, winFinding{finding{rule: rule, reason: reason, action: a}, hint})
	}
	return allowed
}

// decision is the judgement's outcome: the first refusal, else the first
// rule of the rule table held for confirmation, else allowed.
func (j *winCheck) decision() Decision {
	best := bestFinding(len(j.findings), func(i int) finding { return j.findings[i].finding })
	if best < 0 {
		return allowed
	}
	f := j.findings[best]
	d := refuse(f.rule, f.reason, f.action == Confirm)
	if f.hint != "" {
		d.Hint = f.hint
	}
	return d
}

// path is windowsPath of arg, a relative arg taken from the working
// directory when it is known, with . and .. resolved.
func (j *winCheck) path(arg string) (p string, all, unknown bool) {
	p, all, unknown = windowsPath(arg)
	if unknown || p == "" || strings.HasPrefix(p, `\\`) {
		return p, all, unknown
	}
	if !strings.HasPrefix(p, "c:") {
		if j.dir == "" || !strings.HasPrefix(j.dir, "c:") {
			return p, all, unknown
		}
		p = j.dir + `\` + p
	}
	// C:\.. is C:\, as on Windows.
	clean := path.Clean("/" + strings.ReplaceAll(p[2:], `\`, "/"))
	p = strings.TrimSuffix("c:"+strings.ReplaceAll(clean, "/", `\`), `\`)
	return p, all, unknown
}

// allowListed applies ModeAllow to a Windows command's program name: a
// name the allow list does not hold is refused, except the cmd.exe
// built-ins that run nothing and, in PowerShell (inPS), cmdlets
// (Verb-Noun names), which run in the shell's own process.
func (j *winCheck) allowListed(word string, inPS bool) Decision {
	if j.cfg.mode != ModeAllow {
		return allowed
	}
	name := program(word)
	if inPS && strings.Contains(name, "-") && !strings.ContainsAny(name, `\.`) {
		return allowed
	}
	if j.cfg.allow[name] || j.cfg.allow[name+".exe"] || windowsInert[name] {
		return allowed
	}
	return j.deny(RuleNotAllowlisted, name+" is not in the allow list", "")
}

// windowsInert are cmd.exe built-ins that run no other program.
var windowsInert = map[string]bool{
	"echo": true, "cd": true, "chdir": true, "dir": true, "type": true, "set": true, "rem": true,
	"ver": true, "vol": true, "cls": true, "title": true, "pushd": true, "popd": true, "exit": true,
	"setlocal": true, "endlocal": true, "prompt": true,
}

// checkWindows judges line, written for dialect, under the policy cfg.
func checkWindows(cfg *config, line string, dialect Dialect, opts Options) Decision {
	j := &winCheck{cfg: cfg, stdin: opts.Stdin}
	if opts.Dir != "" {
		j.dir, _, _ = windowsPath(opts.Dir)
	}
	if dialect == DialectPowerShell {
		j.checkPowerShell(line, 0)
	} else {
		j.checkCmd(line, 0)
	}
	return j.decision()
}

// checkWindowsArgv judges an exact argument vector run on a Windows
// target: argv[0] with argv[1:] as its words.
func checkWindowsArgv(cfg *config, argv []string, dialect Dialect, opts Options) Decision {
	j := &winCheck{cfg: cfg, stdin: opts.Stdin}
	if opts.Dir != "" {
		j.dir, _, _ = windowsPath(opts.Dir)
	}
	if dialect == DialectPowerShell {
		j.judgePowerShell(argv, 0)
	} else {
		j.judgeWindows(argv, 0, false)
	}
	return j.decision()
}

var allowed = Decision{Allowed: true}

// CheckCmd judges a command line sent to cmd.exe on a Windows SSH target:
// every command of it (split at &, &&, ||, | and parentheses, ^ escapes
// removed, cmd /c and powershell -Command bodies judged too) is checked
// for recursive deletes of protected roots, formatting and partitioning,
// registry, service, boot-configuration and shadow-copy destruction, power
// changes, account deletion, and downloaded code run. Near misses pass:
// rmdir /s /q build, dir /s, del /q *.tmp, reg query HKLM\….
//
// It is [Policy.Check] of the default policy with [Options].Dialect set to
// [DialectCmd]; Policy.Check applies a policy's rule actions, mode and
// allow list too. The protected roots are Windows' own (drive roots,
// C:\Windows, C:\Program Files, C:\Users and each profile, …); the
// policy's POSIX ProtectedRoots do not apply.
func CheckCmd(line string) Decision {
	return checkWindows((*Policy)(nil).compile(), line, DialectCmd, Options{})
}

func (j *winCheck) checkCmd(line string, depth int) Decision {
	if depth > 4 {
		return j.deny(RuleTooComplex, "commands nested more than four levels deep", "")
	}
	if strings.ContainsRune(line, 0) {
		return j.deny(RuleParseError, "the command holds a NUL byte", "")
	}
	cmds, err := splitCmd(line)
	if err != "" {
		return j.deny(RuleParseError, err, "close the quotes")
	}
	for _, words := range cmds {
		if d := j.judgeWindows(words, depth, false); !d.Allowed {
			return d
		}
	}
	return allowed
}

// splitCmd splits a cmd.exe line into commands of words: & && || | ( )
// and newlines separate commands outside double quotes, ^ escapes the
// next character, a leading @ is dropped.
func splitCmd(line string) ([][]string, string) {
	var cmds [][]string
	var words []string
	var w strings.Builder
	inWord, quoted := false, false
	flushWord := func() {
		if inWord {
			words = append(words, w.String())
			w.Reset()
			inWord = false
		}
	}
	flushCmd := func() {
		flushWord()
		if len(words) > 0 {
			words[0] = strings.TrimLeft(words[0], "@")
			if words[0] == "" {
				words = words[1:]
			}
		}
		if len(words) > 0 {
			cmds = append(cmds, words)
		}
		words = nil
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '"':
			quoted = !quoted
			inWord = true
			w.WriteByte(c)
		case quoted:
			w.WriteByte(c)
		case c == '^' && i+1 < len(line):
			i++
			w.WriteByte(line[i])
			inWord = true
		case c == '&' || c == '|' || c == '(' || c == ')' || c == '\n' || c == '\r':
			flushCmd()
		case c == ' ' || c == '\t' || c == ',' || c == ';' || c == '=' && !inWord:
			flushWord()
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if quoted {
		return nil, "an unterminated double quote"
	}
	flushCmd()
	return cmds, ""
}

// switches returns the lower-cased /x switches of args (/s/q counts as
// /s and /q) and the other arguments.
func switches(args []string) (map[string]bool, []string) {
	sw := map[string]bool{}
	var rest []string
	for _, a := range args {
		key, _, _ := strings.Cut(a, ":") // /w:C:\ and /FS:NTFS are switches w and fs
		if strings.HasPrefix(a, "/") && len(key) > 1 && !strings.Contains(key, `\`) && len(key) <= 24 {
			for _, s := range strings.Split(strings.ToLower(key[1:]), "/") {
				if s != "" {
					sw[s] = true
				}
			}
			continue
		}
		rest = append(rest, a)
	}
	return sw, rest
}

// program is a command's name as cmd.exe and PowerShell find it: lower
// case, without its directory, quotes or .exe/.com/.cmd/.bat extension.
func program(word string) string {
	p := strings.ToLower(strings.Trim(word, `"'`))
	p = strings.ReplaceAll(p, "/", `\`)
	if i := strings.LastIndexByte(p, '\\'); i >= 0 {
		p = p[i+1:]
	}
	for _, ext := range []string{".exe", ".com", ".cmd", ".bat"} {
		p = strings.TrimSuffix(p, ext)
	}
	return p
}

// judgeWindows judges one command: the programs both shells run the same
// way. inPS is set when PowerShell runs it (so sc is Set-Content, not the
// service controller, unless spelled sc.exe).
func (j *winCheck) judgeWindows(words []string, depth int, inPS bool) Decision {
	if d := j.allowListed(words[0], inPS); !d.Allowed {
		return d
	}
	name := program(words[0])
	args := words[1:]
	sw, rest := switches(args)
	lower := strings.ToLower(strings.Join(args, " "))
	switch name {
	case "rmdir", "rd":
		if sw["s"] {
			for _, a := range rest {
				if p, all, unknown := j.path(a); windowsRoot(p) || (unknown && !all) {
					return j.deny(RuleRecursiveDeleteRoot, name+" /s of "+a+", a protected root or a path known only at run time",
						`delete a specific subdirectory instead (rmdir /s /q .\build)`)
				}
			}
		}
	case "del", "erase":
		for _, a := range rest {
			p, all, unknown := j.path(a)
			if windowsCriticalFile(p) {
				return j.deny(RuleCriticalFileWrite, name+" of "+a+", a file Windows needs to run or boot", "")
			}
			if (sw["s"] || all) && (windowsRoot(p) || unknown) {
				return j.deny(RuleRecursiveDeleteRoot, name+" of the files of "+a+", a protected root",
					`delete files in a specific subdirectory (del /s /q .\build\*.obj)`)
			}
		}
	case "format":
		return j.deny(RuleDiskFormat, "format creates a filesystem", "list volumes with Get-Volume or wmic logicaldisk")
	case "diskpart":
		return j.deny(RuleDiskFormat, "diskpart partitions and wipes disks", "list disks with Get-Disk")
	case "cipher":
		if sw["w"] {
			return j.deny(RuleDiskFormat, "cipher /w overwrites a volume's free space", "")
		}
	case "reg":
		if len(args) > 0 && strings.EqualFold(args[0], "delete") && len(args) > 1 {
			key := strings.ToUpper(strings.Trim(args[1], `"`))
			if regProtected(key) {
				return j.deny(RuleRegistryDelete, "reg delete of "+args[1]+", a machine-wide registry key",
					`change a key under HKCU\Software\<your app> instead, or ask an operator`)
			}
		}
	case "sc":
		if inPS && !strings.HasSuffix(strings.ToLower(words[0]), ".exe") {
			break // Set-Content
		}
		if len(args) > 0 && strings.EqualFold(args[0], "delete") || len(args) > 1 && strings.EqualFold(args[1], "delete") {
			return j.deny(RuleServiceDelete, "sc delete removes a service", "stop it with sc stop, or ask an operator")
		}
	case "bcdedit":
		if len(args) > 0 && !sw["enum"] && !sw["v"] && !sw["?"] {
			return j.deny(RuleBootConfig, "bcdedit changes the boot configuration", "read it with bcdedit /enum")
		}
	case "vssadmin":
		if strings.Contains(lower, "delete") || strings.Contains(lower, "resize") {
			return j.deny(RuleShadowCopyDelete, "vssadmin deletes or shrinks shadow copies (backups)", "list them with vssadmin list shadows")
		}
	case "wmic":
		if strings.Contains(lower, "shadowcopy") && strings.Contains(lower, "delete") {
			return j.deny(RuleShadowCopyDelete, "wmic shadowcopy delete removes shadow copies (backups)", "")
		}
	case "wbadmin":
		if len(args) > 0 && strings.EqualFold(args[0], "delete") {
			return j.deny(RuleShadowCopyDelete, "wbadmin delete removes backups", "")
		}
	case "shutdown":
		if !sw["a"] && !sw["?"] {
			return j.deny(RulePowerState, "shutdown changes the power state", "ask an operator")
		}
	case "net":
		if len(args) > 1 && strings.EqualFold(args[0], "user") && (sw["delete"] || sw["del"]) {
			return j.deny(RuleAccountTamper, "net user /delete removes an account", "")
		}
	case "takeown", "icacls", "attrib", "cacls":
		if sw["r"] || sw["t"] || sw["s"] {
			for _, a := range rest {
				if p, _, unknown := j.path(a); windowsRoot(p) || unknown {
					return j.deny(RuleRecursiveChmodRoot, name+" of "+a+" recursively, a protected root", "change a specific subdirectory")
				}
			}
		}
	case "move", "ren", "rename":
		if len(rest) > 0 {
			if p, all, _ := j.path(rest[0]); windowsRoot(p) && (!all || name == "move") {
				return j.deny(RuleMoveRoot, name+" of "+rest[0]+", a protected root", "move a specific file or subdirectory")
			}
		}
	case "cmd":
		for i, a := range args {
			if s := strings.ToLower(a); s == "/c" || s == "/k" || s == "/r" {
				body := strings.Join(args[i+1:], " ")
				if len(body) >= 2 && body[0] == '"' && body[len(body)-1] == '"' {
					body = body[1 : len(body)-1]
				}
				return j.checkCmd(body, depth+1)
			}
		}
		if j.stdin != nil {
			// cmd without /c runs the lines of its standard input.
			return j.checkCmd(*j.stdin, depth+1)
		}
	case "powershell", "pwsh":
		return j.checkPowerShellArgs(args, depth)
	case "mshta":
		for _, a := range args {
			if strings.Contains(strings.ToLower(a), "http") {
				return j.deny(RuleRemoteScript, "mshta runs a downloaded script", "download it, read it, then run it")
			}
		}
	case "call", "start":
		if len(args) > 0 {
			rest := args
			if name == "start" && len(rest) > 0 && strings.HasPrefix(rest[0], `"`) {
				rest = rest[1:] // the window title
			}
			for len(rest) > 0 && strings.HasPrefix(rest[0], "/") {
				rest = rest[1:]
			}
			if len(rest) > 0 {
				return j.judgeWindows(rest, depth+1, inPS)
			}
		}
	}
	return allowed
}

// regProtected reports whether a registry key is machine-wide or a hive
// root of the user's own.
func regProtected(key string) bool {
	key = strings.TrimPrefix(key, `REGISTRY::`)
	key = strings.TrimPrefix(key, `\\`)
	if i := strings.Index(key, `\`); i >= 0 && strings.Contains(key[:i], ".") {
		key = key[i+1:] // \\host\HKLM\…
	}
	key = strings.Replace(key, ":", "", 1)
	root, sub, _ := strings.Cut(key, `\`)
	switch root {
	case "HKLM", "HKEY_LOCAL_MACHINE", "HKU", "HKEY_USERS", "HKCR", "HKEY_CLASSES_ROOT", "HKCC", "HKEY_CURRENT_CONFIG":
		return true
	case "HKCU", "HKEY_CURRENT_USER":
		s := strings.TrimRight(sub, `\`)
		return s == "" || s == "SOFTWARE" || s == `SOFTWARE\MICROSOFT` || s == `SOFTWARE\MICROSOFT\WINDOWS`
	}
	return false
}

// CheckPowerShell judges a command line sent to PowerShell on a Windows
// SSH target: Remove-Item (and its aliases) -Recurse of protected roots,
// Invoke-Expression of downloaded or decoded code, Format-Volume and the
// disk cmdlets, Stop-Computer and Restart-Computer, registry and service
// removal, and the programs CheckCmd judges when PowerShell runs them.
// Near misses pass: Remove-Item .\tmp -Recurse, Get-ChildItem C:\ -Recurse,
// iwr URL -OutFile f.zip.
//
// Its statement splitting is lexical (quotes, ; | && || newlines, and the
// contents of ( ), $( ) and { } judged as statements of their own), not a
// PowerShell parser. It is [Policy.Check] of the default policy with
// [Options].Dialect set to [DialectPowerShell].
func CheckPowerShell(line string) Decision {
	return checkWindows((*Policy)(nil).compile(), line, DialectPowerShell, Options{})
}

func (j *winCheck) checkPowerShell(line string, depth int) Decision {
	if depth > 4 {
		return j.deny(RuleTooComplex, "commands nested more than four levels deep", "")
	}
	if strings.ContainsRune(line, 0) {
		return j.deny(RuleParseError, "the command holds a NUL byte", "")
	}
	low := strings.ToLower(line)
	if runsCode(low) && fetchesCode(low) {
		return j.deny(RuleRemoteScript, "downloaded or decoded code run by Invoke-Expression, a script block or a shell",
			"download to a file, read it, then run it as a separate step")
	}
	stmts, err := splitPowerShell(line)
	if err != "" {
		return j.deny(RuleParseError, err, "close the quotes and brackets")
	}
	for _, pipeline := range stmts {
		listsRoot := false
		for i, words := range pipeline {
			if d := j.judgePowerShell(words, depth); !d.Allowed {
				return d
			}
			name := strings.ToLower(words[0])
			if i > 0 && listsRoot && (removeAliases[name] || name == "remove-item") {
				return j.deny(RuleRecursiveDeleteRoot, "the recursive listing of a protected root piped to Remove-Item",
					"list a specific subdirectory")
			}
			if listAliases[name] {
				for _, a := range words[1:] {
					if p, _, unknown := j.path(a); !strings.HasPrefix(a, "-") && (windowsRoot(p) || unknown) {
						listsRoot = listsRoot || hasParam(words[1:], "recurse", 1)
					}
				}
			}
		}
	}
	return allowed
}

// runsCode and fetchesCode spot code that is downloaded or decoded and
// then run, anywhere in a line: iex (iwr …), (New-Object Net.WebClient).
// DownloadString(…) | iex, [ScriptBlock]::Create((irm …)), and so on.
func runsCode(low string) bool {
	for _, s := range []string{"invoke-expression", "iex", "scriptblock]::create", "invoke-command", "powershell", "pwsh", "cmd /c", "cmd.exe", "& (", "&(", ". (", ".("} {
		if containsWord(low, s) {
			return true
		}
	}
	return false
}

func fetchesCode(low string) bool {
	for _, s := range []string{"invoke-webrequest", "iwr", "invoke-restmethod", "irm", "downloadstring", "downloaddata", "downloadfile", "net.webclient", "start-bitstransfer", "curl", "wget", "frombase64string", "http://", "https://"} {
		if containsWord(low, s) {
			return true
		}
	}
	return false
}

// containsWord reports whether s occurs in low not inside a longer word.
func containsWord(low, s string) bool {
	isWord := func(b byte) bool {
		return b == '-' || b == '_' || b >= 'a' && b <= 'z' || b >= '0' && b <= '9'
	}
	for i := 0; ; {
		j := strings.Index(low[i:], s)
		if j < 0 {
			return false
		}
		j += i
		before := j == 0 || !isWord(low[j-1]) || !isWord(s[0])
		end := j + len(s)
		after := end == len(low) || !isWord(low[end]) || !isWord(s[len(s)-1])
		if before && after {
			return true
		}
		i = j + 1
	}
}

var removeAliases = map[string]bool{"rm": true, "del": true, "erase": true, "rd": true, "rmdir": true, "ri": true, "remove-item": true}
var listAliases = map[string]bool{"get-childitem": true, "gci": true, "ls": true, "dir": true}

// hasParam reports whether args hold -name or an unambiguous prefix of it
// at least min letters long (PowerShell accepts -r, -rec, -Recurse).
func hasParam(args []string, name string, min int) bool {
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			continue
		}
		p := strings.ToLower(strings.TrimPrefix(a, "-"))
		p, _, _ = strings.Cut(p, ":")
		if len(p) >= min && strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// judgePowerShell judges one command of a pipeline.
func (j *winCheck) judgePowerShell(words []string, depth int) Decision {
	name := strings.ToLower(words[0])
	args := words[1:]
	switch {
	case removeAliases[name]:
		recurse := hasParam(args, "recurse", 1)
		for i, a := range args {
			if strings.HasPrefix(a, "-") {
				continue
			}
			if i > 0 && isValueParam(args[i-1]) {
				continue
			}
			p, all, unknown := j.path(a)
			if windowsCriticalFile(p) {
				return j.deny(RuleCriticalFileWrite, "Remove-Item of "+a+", a file Windows needs to run or boot", "")
			}
			if strings.HasPrefix(p, "hk") && regProtected(strings.ToUpper(strings.Trim(a, `"'`))) {
				return j.deny(RuleRegistryDelete, "Remove-Item of "+a+", a machine-wide registry key", `change a key under HKCU:\Software\<your app>`)
			}
			if (recurse || all) && (windowsRoot(p) || unknown) {
				return j.deny(RuleRecursiveDeleteRoot, "Remove-Item -Recurse of "+a+", a protected root or a path known only at run time",
					`delete a specific subdirectory (Remove-Item .\build -Recurse)`)
			}
		}
		if name != "remove-item" && name != "ri" {
			// rd /s /q C:\ in PowerShell fails to bind, but is refused as cmd.exe would.
			return j.judgeWindows(words, depth, true)
		}
	case name == "remove-itemproperty" || name == "rp":
		for _, a := range args {
			if !strings.HasPrefix(a, "-") && regProtected(strings.ToUpper(strings.Trim(a, `"'`))) {
				return j.deny(RuleRegistryDelete, "Remove-ItemProperty of "+a+", a machine-wide registry key", "")
			}
		}
	case name == "format-volume" || name == "clear-disk" || name == "initialize-disk" || name == "remove-partition":
		return j.deny(RuleDiskFormat, words[0]+" formats, wipes or repartitions a disk", "list them with Get-Volume, Get-Disk, Get-Partition")
	case name == "stop-computer" || name == "restart-computer":
		return j.deny(RulePowerState, words[0]+" changes the power state", "ask an operator")
	case name == "remove-service":
		return j.deny(RuleServiceDelete, "Remove-Service removes a service", "stop it with Stop-Service")
	case name == "remove-localuser":
		return j.deny(RuleAccountTamper, "Remove-LocalUser removes an account", "")
	case name == "remove-wmiobject" || name == "remove-ciminstance":
		return j.deny(RuleShadowCopyDelete, words[0]+" deletes system objects such as shadow copies", "")
	case name == "invoke-expression" || name == "iex":
		for _, a := range args {
			if p := strings.ToLower(strings.Trim(a, `"'`)); !strings.HasPrefix(p, "-") {
				if d := j.checkPowerShell(strings.Trim(a, `"'`), depth+1); !d.Allowed {
					return d
				}
			}
		}
	case name == "&" || name == ".":
		if len(args) > 0 {
			return j.judgePowerShell(args, depth+1)
		}
	default:
		return j.judgeWindows(words, depth, true)
	}
	return allowed
}

// isValueParam reports whether a is a parameter whose value follows it
// and is not a path (-Filter *.tmp, -Include, -Exclude).
func isValueParam(a string) bool {
	p := strings.ToLower(strings.TrimPrefix(a, "-"))
	for _, v := range []string{"filter", "include", "exclude", "credential", "stream"} {
		if len(p) >= 2 && strings.HasPrefix(v, p) {
			return true
		}
	}
	return false
}

// checkPowerShellArgs judges powershell.exe's arguments: -Command (and
// its prefixes, -c), -EncodedCommand (base64 of UTF-16LE), and -File.
func (j *winCheck) checkPowerShellArgs(args []string, depth int) Decision {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "/") {
			// The first non-parameter starts the command.
			return j.checkPowerShell(strings.Join(args[i:], " "), depth+1)
		}
		p := strings.ToLower(strings.TrimLeft(a, "-/"))
		switch {
		case p == "e" || p == "ec" || len(p) >= 2 && strings.HasPrefix("encodedcommand", p):
			if i+1 >= len(args) {
				return allowed
			}
			code, ok := decodeUTF16Base64(strings.Trim(args[i+1], `"'`))
			if !ok {
				return j.deny(RuleParseError, "-EncodedCommand that is not base64 of UTF-16LE text", "")
			}
			return j.checkPowerShell(code, depth+1)
		case p == "c" || len(p) >= 3 && strings.HasPrefix("command", p):
			if i+1 < len(args) && args[i+1] == "-" {
				return j.stdinCode(depth)
			}
			body := strings.Join(args[i+1:], " ")
			if len(body) >= 2 && body[0] == '"' && body[len(body)-1] == '"' {
				body = body[1 : len(body)-1]
			}
			return j.checkPowerShell(body, depth+1)
		case (p == "file" || p == "f") && i+1 < len(args) && args[i+1] == "-":
			return j.stdinCode(depth)
		case p == "file" || p == "f":
			return allowed // a script file's contents are not visible here
		case psValueParam(p):
			i++ // its value
		}
	}
	// No command: PowerShell runs its standard input.
	return j.stdinCode(depth)
}

// stdinCode judges the call's standard input as the PowerShell code that
// powershell without a command (or with -Command -) reads from it.
func (j *winCheck) stdinCode(depth int) Decision {
	if j.stdin == nil {
		return allowed
	}
	return j.checkPowerShell(*j.stdin, depth+1)
}

// psValueParam reports whether powershell.exe's parameter p (lower case,
// without its dash) takes a value: -ExecutionPolicy Bypass, -w hidden.
func psValueParam(p string) bool {
	switch p {
	case "ep", "ex", "exec", "w", "v", "if", "of", "wd", "o":
		return true
	}
	for _, v := range []string{"executionpolicy", "windowstyle", "version", "psconsolefile", "inputformat",
		"outputformat", "configurationname", "workingdirectory", "settingsfile", "custompipename"} {
		if len(p) >= 3 && strings.HasPrefix(v, p) {
			return true
		}
	}
	return false
}

func decodeUTF16Base64(s string) (string, bool) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b)%2 != 0 {
		return "", false
	}
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return string(utf16.Decode(u)), true
}

// splitPowerShell splits a line into statements of pipelines of commands
// of words. Quotes group words ('…' literal, "…" with ` escapes); ; &&
// || and newlines end statements; | ends a command; the contents of (),
// $() and {} become statements of their own, judged like the rest.
func splitPowerShell(line string) ([][][]string, string) {
	var stmts [][][]string
	var pipe [][]string
	var words []string
	var w strings.Builder
	inWord := false
	flushWord := func() {
		if inWord {
			words = append(words, w.String())
			w.Reset()
			inWord = false
		}
	}
	flushCmd := func() {
		flushWord()
		if len(words) > 0 {
			pipe = append(pipe, words)
		}
		words = nil
	}
	flushStmt := func() {
		flushCmd()
		if len(pipe) > 0 {
			stmts = append(stmts, pipe)
		}
		pipe = nil
	}
	depth := 0
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'' || c == '"':
			j := i + 1
			for ; j < len(line) && line[j] != c; j++ {
				if c == '"' && line[j] == '`' {
					j++
				}
			}
			if j >= len(line) {
				return nil, "an unterminated quote"
			}
			w.WriteString(line[i : j+1])
			inWord = true
			i = j
		case c == '`' && i+1 < len(line):
			i++
			w.WriteByte(line[i])
			inWord = true
		case c == '(' || c == '{':
			depth++
			flushStmt()
		case c == ')' || c == '}':
			if depth--; depth < 0 {
				return nil, "an unbalanced closing bracket"
			}
			flushStmt()
		case c == ';' || c == '\n' || c == '\r':
			flushStmt()
		case c == '&' && i+1 < len(line) && line[i+1] == '&', c == '|' && i+1 < len(line) && line[i+1] == '|':
			i++
			flushStmt()
		case c == '|':
			flushCmd()
		case c == '$' && i+1 < len(line) && line[i+1] == '(':
			// $( is a subexpression: the ( case opens it.
		case c == ' ' || c == '\t' || c == ',':
			flushWord()
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if depth != 0 {
		return nil, "an unclosed bracket"
	}
	flushStmt()
	return stmts, ""
}
