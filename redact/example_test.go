package redact_test

import (
	"fmt"

	"github.com/rigout/rigout/redact"
)

func ExampleString() {
	fmt.Println(redact.String("DB_PASSWORD=hunter2 monkey=banana"))
	fmt.Println(redact.String("Authorization: Bearer eyJhbGciOi.abc.def"))
	fmt.Println(redact.String("postgres://app:s3cret@db:5432/app"))
	// Output:
	// DB_PASSWORD=*** monkey=banana
	// Authorization: Bearer ***
	// postgres://app:***@db:5432/app
}
