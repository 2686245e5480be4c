package nb

import "encoding/json"

// Event is one message of the session server's answer to a line: the server
// streams them as JSON lines while the command runs, and the cell shows each
// as it comes. Exactly one field is set.
type Event struct {
	Progress *Progress `json:"progress,omitempty"` // a training step (or the compile before the first)
	Text     string    `json:"text,omitempty"`     // what the REPL would print
	Figure   *Figure   `json:"figure,omitempty"`   // a picture
	Result   *Result   `json:"result,omitempty"`   // a command's result
	Error    string    `json:"error,omitempty"`    // the line failed: the one-line message
	Done     *Done     `json:"done,omitempty"`     // the last event of a line
}

// Progress is one step of a run as a live loss plot needs it.
type Progress struct {
	Run       string  `json:"run"` // which run of the line (compare, retrieval: several)
	Step      int     `json:"step"`
	Steps     int     `json:"steps"`
	Loss      float64 `json:"loss"`
	Status    string  `json:"status"`
	Compiling bool    `json:"compiling,omitempty"`
	EvalLoss  float64 `json:"eval_loss,omitempty"`
	EvalLine  string  `json:"eval_line,omitempty"` // the evaluation's summary, on evaluation steps
}

// Figure is a picture: a PNG (what every notebook UI and exported HTML
// shows), its text form and a caption.
type Figure struct {
	PNG     []byte `json:"png"`
	Text    string `json:"text,omitempty"`
	Caption string `json:"caption,omitempty"`
	Width   int    `json:"width,omitempty"`
	Height  int    `json:"height,omitempty"`
}

// Result is a command's result as its JSON (what `ecpi CMD --json` prints).
type Result struct {
	Command string          `json:"command"`
	JSON    json.RawMessage `json:"json"`
}

// Decode unmarshals the result's JSON into v.
func (r *Result) Decode(v any) error { return json.Unmarshal(r.JSON, v) }

// Done ends a line: how long it took on the server.
type Done struct {
	Seconds float64 `json:"seconds"`
}
