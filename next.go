package rigout

import "encoding/json"

// NextCall is the call a result tells the model to make next: which tool,
// with which arguments. A result carries it twice, in structuredContent
// under "next" (clients that declare an output schema show the model only
// that) and as the last "next:" line of its text (clients that show only
// text), so that every client's model learns it.
type NextCall struct {
	// Tool is the tool to call.
	Tool string `json:"tool"`
	// Arguments are the call's arguments, ready to send; a value the
	// model must fill in is a string naming what goes there ("…").
	Arguments map[string]any `json:"arguments"`
	// Why says in a few words what the call does.
	Why string `json:"why,omitempty"`
}

// String renders the call for a result's text: the tool, its arguments
// as one line of JSON, and why.
func (n NextCall) String() string {
	b, _ := json.Marshal(n.Arguments)
	s := n.Tool + " " + string(b)
	if n.Why != "" {
		s += " (" + n.Why + ")"
	}
	return s
}

// Line returns the call as the "next:" line that ends a result's text.
func (n NextCall) Line() string { return "next: " + n.String() + "\n" }
