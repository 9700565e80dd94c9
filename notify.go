package rigout

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/rigout/rigout/redact"
)

// Notification settling. mcp-go v1.2.1 queues a call's notifications on
// its session's one channel, which both the call's POST stream and the
// client's standalone GET stream read; the last notification sent before a
// tool returns can therefore be written after the result, or dropped by the
// POST stream's forwarder, and a client discards progress that arrives
// after its result. A call that sent notifications through its Call has its
// result held until the session's queue is empty and a short grace has
// passed, so whichever stream took the last notification has written it.
// stdio and in-process sessions deliver in order and are never held. The
// grace is 50 ms: 10 ms let the last notification arrive after the result
// under CI's load (race detector, parallel test binaries); only calls that
// notified over streamable HTTP pay it, and those are long-running ones.
const (
	settleMax   = time.Second
	settleGrace = 50 * time.Millisecond
)

// ErrNoSession means a notification had no client session to go to.
var ErrNoSession = errors.New("rigout: no client session to notify")

// Notify sends a notification to the client making the call. Use it (or
// Progress and Log) rather than mcp-go's server directly, so that the
// gateway delivers every notification before the call's result, masked as
// the result is: every string in params (but a progress token, the
// client's own) is redacted of [Config.Secrets] and of the values the call
// added with [Call.MaskSecrets] so far.
func (c *Call) Notify(ctx context.Context, method string, params map[string]any) error {
	srv := server.ServerFromContext(ctx)
	if srv == nil {
		return ErrNoSession
	}
	c.notified.Store(true)
	if params != nil {
		token, hasToken := params["progressToken"]
		masked, _ := c.maskNotice(params).(map[string]any)
		if masked == nil {
			return errors.New("rigout: notification parameters are not a JSON object")
		}
		if hasToken {
			masked["progressToken"] = token
		}
		params = masked
	}
	return srv.SendNotificationToClient(ctx, method, params)
}

// Progress reports progress of the call to the client, if the client
// passed a progress token; otherwise it does nothing. progress must
// increase with every report; total is 0 when unknown. message is masked
// as [Call.Notify] masks its parameters.
func (c *Call) Progress(ctx context.Context, progress, total float64, message string) error {
	meta := c.Request.Params.Meta
	if meta == nil || meta.ProgressToken == nil {
		return nil
	}
	params := map[string]any{"progressToken": meta.ProgressToken, "progress": progress}
	if total > 0 {
		params["total"] = total
	}
	if message != "" {
		params["message"] = message
	}
	return c.Notify(ctx, string(mcp.MethodNotificationProgress), params)
}

// WantsProgress reports whether the client passed a progress token and a
// session can carry the reports, so a long-running tool knows whether to
// report.
func (c *Call) WantsProgress(ctx context.Context) bool {
	m := c.Request.Params.Meta
	return m != nil && m.ProgressToken != nil && server.ServerFromContext(ctx) != nil
}

// Log sends a log message to the client, subject to the level the client
// set. logger and data are masked as [Call.Notify] masks its parameters;
// data that does not encode as JSON is sent as null.
func (c *Call) Log(ctx context.Context, level mcp.LoggingLevel, logger string, data any) error {
	srv := server.ServerFromContext(ctx)
	if srv == nil {
		return ErrNoSession
	}
	c.notified.Store(true)
	logger, _ = c.maskNotice(logger).(string)
	return srv.SendLogMessageToClient(ctx, mcp.NewLoggingMessageNotification(level, logger, c.maskNotice(data)))
}

// maskNotice returns v masked as a result is: v itself when no string in
// it holds anything to mask, else its JSON form decoded with every string
// redacted (nil if v does not encode).
func (c *Call) maskNotice(v any) any {
	sets := []*redact.Set{nil} // a nil Set masks like redact.String
	if c.gw != nil {
		sets[0] = c.gw.cfg.Secrets
	}
	if cs := c.maskSet(); cs != nil {
		sets = append(sets, cs)
	}
	clean := true
	for _, set := range sets {
		clean = clean && maskClean(set, v)
	}
	if clean {
		return v
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return nil
	}
	for _, set := range sets {
		maskStrings(set, &out)
	}
	return out
}

// settleNotifications holds a call's result until the notifications it
// sent over streamable HTTP have been written (see above).
func settleNotifications(ctx context.Context, call *Call) {
	if !call.notified.Load() {
		return
	}
	s, ok := server.ClientSessionFromContext(ctx).(server.SessionWithStreamableHTTPConfig)
	if !ok {
		return
	}
	queue := s.NotificationChannel()
	if len(queue) > 0 {
		deadline := time.NewTimer(settleMax)
		defer deadline.Stop()
		poll := time.NewTicker(time.Millisecond)
		defer poll.Stop()
		for len(queue) > 0 {
			select {
			case <-ctx.Done():
				return
			case <-deadline.C:
				return
			case <-poll.C:
			}
		}
	}
	select {
	case <-ctx.Done():
	case <-time.After(settleGrace):
	}
}
