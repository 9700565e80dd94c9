package exec

// Exports for shell_test.go.
var (
	CRTQuote = crtQuote
)
