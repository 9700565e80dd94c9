package validate

import (
	"strings"
	"testing"
)

// TestHandlersOddArguments runs every command handler over odd argument
// lists: no handler may panic (Check would refuse with too-complex).
func TestHandlersOddArguments(t *testing.T) {
	odd := [][]string{
		{}, {"-"}, {"--"}, {"--="}, {"-="}, {"-1"}, {"-D"}, {"-o"}, {"-c"}, {"-e"}, {"-S"}, {"-I"},
		{"-t"}, {"-u"}, {"-p"}, {"-C"}, {"-f"}, {"-s"}, {"-i"}, {"-x"}, {"-r"}, {"-a"}, {"-n"},
		{"-v"}, {"-m"}, {"--exec"}, {"--command"}, {"-O"}, {"-d"}, {"-h"}, {"+"}, {"+O"},
		{"-c", "-c"}, {"-e", "-e"}, {"-o", "-o"}, {"/", "/"}, {"of="}, {"if="}, {":::"},
		{"-S", "-S"}, {"{}"}, {"-I", "{}"}, {"--", "--"}, {"run"}, {"exec"}, {"-1", "-1"},
		{"config"}, {"config", "x"}, {"-oProxyCommand"}, {"-o", "ProxyCommand"}, {"+!"}, {"e"},
		{"-u", "x", "-c"}, {"x", "-c"}, {"-f", "-"}, {"-execdir", ";"}, {"-exec", "+"},
		{"-delete", "/"}, {"-rf", "/"}, {"-R", "0", "/"}, {"--remove-files"}, {"-T", "x"},
		{"\x00"}, {"'"}, {"$'\\x'"}, {"--to-command"}, {"--checkpoint-action=exec="},
	}
	var p Policy
	for name := range commandTable {
		for _, args := range odd {
			argv := append([]string{name}, args...)
			if d := p.CheckArgv(argv, Options{}); strings.Contains(d.Reason, "checker failed") {
				t.Errorf("CheckArgv(%q): %s", argv, d.Reason)
			}
			cmd := name + " " + strings.Join(args, " ")
			if d := p.Check(cmd, Options{}); strings.Contains(d.Reason, "checker failed") {
				t.Errorf("Check(%q): %s", cmd, d.Reason)
			}
			if d := p.Check("echo x | "+cmd, Options{Dir: "/"}); strings.Contains(d.Reason, "checker failed") {
				t.Errorf("Check(echo x | %q): %s", cmd, d.Reason)
			}
		}
	}
}
