package redact_test

import (
	"encoding/base64"
	"fmt"
	"os"

	"github.com/rigout/rigout/redact"
)

// The gateway knows its own token; output that holds it, under any name or
// base64-encoded, is masked, as is everything String finds.
func Example() {
	const token = "rgt_Zq81xPw0bLmN4vTy" // a fake gateway token
	set, err := redact.New(token)
	if err != nil {
		panic(err)
	}
	fmt.Println(set.Redact("MY_VAR=" + token))
	fmt.Println(set.Redact("echo " + base64.StdEncoding.EncodeToString([]byte(token))))
	fmt.Println(set.Redact("MYSQL_PWD=hunter22 token_type=bearer expires_in=3600"))
	fmt.Println(set)
	// Output:
	// MY_VAR=***
	// echo ***
	// MYSQL_PWD=*** token_type=bearer expires_in=3600
	// redact.Set(1 secrets)
}

func ExampleString() {
	fmt.Println(redact.String("DB_PASSWORD=hunter2 monkey=banana bypass=true"))
	fmt.Println(redact.String("Authorization: Bearer eyJhbGciOi.abc.def"))
	fmt.Println(redact.String("postgres://app:s3cret@db:5432/app"))
	// Output:
	// DB_PASSWORD=*** monkey=banana bypass=true
	// Authorization: Bearer ***
	// postgres://app:***@db:5432/app
}

func ExampleSet_Add() {
	var set redact.Set // the zero Set is ready to use
	if err := set.Add("short"); err != nil {
		fmt.Println(err)
	}
	if err := set.Add("a-longer-passphrase"); err != nil {
		fmt.Println(err)
	}
	fmt.Println(set.Redact("unlocked with a-longer-passphrase"))
	// Output:
	// redact: secret shorter than 8 bytes
	// unlocked with ***
}

func ExampleSet_Scrubber() {
	set, _ := redact.New("tr0ub4dor&3")
	sc := set.Scrubber(os.Stdout)
	sc.Write([]byte("the key is tr0ub"))
	sc.Write([]byte("4dor&3, keep it\n"))
	sc.Close()
	// Output: the key is ***, keep it
}
