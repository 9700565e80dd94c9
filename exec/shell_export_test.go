package exec

// Exports for shell_test.go.
var (
	ParseShellProbe = parseShellProbe
	CRTQuote        = crtQuote
)

// ShellProbe is the probe command SSH.Shell sends to a Windows server.
const ShellProbe = shellProbe
