package audit

import "errors"

// ErrInvalidEvent is wrapped by a [Recorder]'s refusal of a malformed event;
// see [Event.Validate]. Compare with errors.Is.
var ErrInvalidEvent = errors.New("audit: invalid event")
