package exec

// Exports for shell_test.go.
var (
	ParseShellProbe = parseShellProbe
	CRTQuote        = crtQuote
)
