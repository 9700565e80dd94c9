package auth_test

import (
	"errors"
	"net/http/httptest"
)

func newRecorder() *httptest.ResponseRecorder { return httptest.NewRecorder() }

func errorsAs(err error, target any) bool { return errors.As(err, target) }
