module github.com/rigout/rigout

go 1.26.8

require (
	github.com/creack/pty v1.1.24 // indirect
	github.com/kr/fs v0.1.0 // indirect
	github.com/mark3labs/mcp-go v1.2.1 // indirect
	github.com/mattn/go-sqlite3 v1.14.53 // indirect
	github.com/pkg/sftp v1.13.12 // indirect
	go.uber.org/goleak v1.3.0 // indirect
	golang.org/x/crypto v0.59.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
	mvdan.cc/sh/v3 v3.14.1 // indirect
)
