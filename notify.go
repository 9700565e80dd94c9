package rigout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/rigout/rigout/internal/callstream"
	"github.com/rigout/rigout/redact"
)

// Notification order. mcp-go v1.2.1 queues a call's notifications on its
// session's one channel, which over streamable HTTP the call's POST stream,
// the client's standalone GET stream and other POSTs all read (and the POST
// stream's forwarder can drop one it dequeued as the result is written),
// and which over stdio a goroutine of its own writes, racing the result. So
// a call does not use that channel while it runs: the transport puts the
// call's own response stream in the request's context
// (internal/callstream), Notify and Log write each notification on it and
// return once it is on the connection, and the dispatcher closes the call's
// use of it when the handler returns, before the result is written. Every
// notification the handler sent is therefore ahead of the result on the
// same stream, and none is lost. A call with no such stream (a transport
// other than rigout's, a 2025-11-25 task that outlives its request) and a
// notification sent after the handler returned go through mcp-go's
// session as before.

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
	if sent, err := c.sendOwn(ctx, method, params); sent {
		return err
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
	logger, _ = c.maskNotice(logger).(string)
	data = c.maskNotice(data)
	if c.stream != nil {
		if !logWanted(ctx, level) {
			return nil
		}
		if sent, err := c.sendOwn(ctx, string(mcp.MethodNotificationMessage),
			map[string]any{"level": level, "logger": logger, "data": data}); sent {
			return err
		}
	}
	return srv.SendLogMessageToClient(ctx, mcp.NewLoggingMessageNotification(level, logger, data))
}

// logWanted reports whether the client asked for log messages of level:
// at 2026-07-28 in the request, before it with logging/setLevel (as mcp-go
// decides in SendLogMessageToClient).
func logWanted(ctx context.Context, level mcp.LoggingLevel) bool {
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		return info.LogLevel != "" && level.ShouldSendTo(info.LogLevel)
	}
	s, ok := server.ClientSessionFromContext(ctx).(server.SessionWithLogging)
	return ok && level.ShouldSendTo(s.GetLogLevel())
}

// sendOwn writes a notification on the call's own response stream (see
// above). It reports false, having sent nothing, when the call has no such
// stream or no longer may use it.
func (c *Call) sendOwn(ctx context.Context, method string, params map[string]any) (bool, error) {
	if c.stream == nil || server.ClientSessionFromContext(ctx) == nil {
		return false, nil
	}
	msg, err := json.Marshal(mcp.JSONRPCNotification{
		JSONRPC:      mcp.JSONRPC_VERSION,
		Notification: mcp.Notification{Method: method, Params: mcp.NotificationParams{AdditionalFields: params}},
	})
	if err != nil {
		return true, fmt.Errorf("rigout: encoding notification %s: %w", method, err)
	}
	c.streamMu.Lock()
	defer c.streamMu.Unlock()
	if c.streamDone {
		return false, nil
	}
	switch err := c.stream.Send(msg); {
	case errors.Is(err, callstream.ErrEnded):
		return false, nil
	case err != nil:
		return true, fmt.Errorf("rigout: sending notification %s: %w", method, err)
	}
	return true, nil
}

// endStream closes the call's use of its response stream: the handler has
// returned, and the result is written next. A notification sent later
// goes through the session.
func (c *Call) endStream() {
	c.streamMu.Lock()
	defer c.streamMu.Unlock()
	c.streamDone = true
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
