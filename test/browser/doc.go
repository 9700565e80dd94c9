// Package browser holds the end-to-end test of the activity page (/ui/) in
// headless Chromium. It is a module of its own, so that chromedp and the
// DevTools protocol never enter rigout's module graph, and so that a panic
// in the browser driver fails only this test, never cmd/rigout's suite.
//
// The test builds the rigout binary from the repository root (../..) and
// drives it as a separate process; it imports no rigout package.
//
//	cd test/browser && go test -count=1 ./...
package browser
