package auth

import "net/http"

// Routes returns the handlers this package serves besides the MCP endpoint,
// keyed by path, for the transport to mount behind its body limit and
// [Front.Guard]:
//
//   - /.well-known/oauth-protected-resource and, when ResourceURL has a
//     path, the same with that path appended (RFC 9728 §3.1): the
//     protected-resource metadata.
//   - /.well-known/oauth-authorization-server (RFC 8414), /oauth/authorize,
//     /oauth/token, and /oauth/register when AllowRegistration: only with
//     Config.OAuth.
//   - /connection.json: only with Config.ConnectionData.
//   - /.well-known/registry-card: name, version, endpoint, transport and
//     how to authenticate.
//
// Each handler checks its own method (405 with Allow otherwise) and does its
// own authentication; none of them needs RequireBearer.
func (f *Front) Routes() map[string]http.Handler {
	m := map[string]http.Handler{
		"/.well-known/oauth-protected-resource": http.HandlerFunc(f.serveResourceMetadata),
		f.prmPath:                               http.HandlerFunc(f.serveResourceMetadata),
		"/.well-known/registry-card":            http.HandlerFunc(f.serveRegistryCard),
	}
	if f.cfg.ConnectionData != nil {
		m["/connection.json"] = http.HandlerFunc(f.serveConnection)
	}
	if f.oauth != nil {
		m["/.well-known/oauth-authorization-server"] = http.HandlerFunc(f.oauth.serveMetadata)
		m[authorizePath] = http.HandlerFunc(f.oauth.serveAuthorize)
		m[tokenPath] = http.HandlerFunc(f.oauth.serveToken)
		if f.oauth.cfg.AllowRegistration {
			m[registerPath] = http.HandlerFunc(f.oauth.serveRegister)
		}
	}
	return m
}

// OAuth endpoint paths, relative to the issuer.
const (
	authorizePath = "/oauth/authorize"
	tokenPath     = "/oauth/token"
	registerPath  = "/oauth/register"
)

// resourceMetadata is the RFC 9728 document.
type resourceMetadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers,omitempty"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ResourceName           string   `json:"resource_name,omitempty"`
}

func (f *Front) serveResourceMetadata(w http.ResponseWriter, r *http.Request) {
	if !getOrHead(w, r) {
		return
	}
	md := resourceMetadata{
		Resource:               f.resource,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           f.cfg.Name,
	}
	if f.oauth != nil {
		md.AuthorizationServers = []string{f.origin}
	}
	writePublicJSON(w, r, md)
}

// registryCard is the machine-readable service description.
type registryCard struct {
	SchemaVersion string   `json:"schema_version"`
	Name          string   `json:"name"`
	Version       string   `json:"version"`
	Endpoint      string   `json:"endpoint"`
	Transport     string   `json:"transport"`
	Auth          cardAuth `json:"auth"`
}

type cardAuth struct {
	Type                      string `json:"type"`
	Header                    string `json:"header,omitempty"`
	Scheme                    string `json:"scheme,omitempty"`
	Instructions              string `json:"instructions"`
	ResourceMetadata          string `json:"resource_metadata"`
	AuthorizationServerMetada string `json:"authorization_server_metadata,omitempty"`
}

func (f *Front) serveRegistryCard(w http.ResponseWriter, r *http.Request) {
	if !getOrHead(w, r) {
		return
	}
	a := cardAuth{
		Type:             "bearer",
		Header:           "Authorization",
		Scheme:           "Bearer",
		Instructions:     "Send the token the operator gave you as 'Authorization: Bearer <token>'. Never put it in the URL.",
		ResourceMetadata: f.prmURL,
	}
	switch {
	case f.noAuth:
		a = cardAuth{Type: "none", Instructions: "No authentication (loopback only).", ResourceMetadata: f.prmURL}
	case f.oauth != nil:
		a.Type = "oauth2"
		a.Instructions = "Use OAuth 2.1 (authorization code with PKCE S256) as described by the authorization server metadata, or a bearer token from the operator."
		a.AuthorizationServerMetada = f.origin + "/.well-known/oauth-authorization-server"
	}
	writePublicJSON(w, r, registryCard{
		SchemaVersion: "1",
		Name:          f.cfg.Name,
		Version:       f.cfg.Version,
		Endpoint:      f.resource,
		Transport:     "streamable-http",
		Auth:          a,
	})
}

// getOrHead answers 405 for anything but GET and HEAD.
func getOrHead(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	methodNotAllowed(w, "GET, HEAD")
	return false
}

// writePublicJSON writes a public metadata document: no credential is in
// it, so caches may keep it for a few minutes.
func writePublicJSON(w http.ResponseWriter, r *http.Request, v any) {
	if r.Method == http.MethodHead {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", publicCache)
		w.WriteHeader(http.StatusOK)
		return
	}
	writeJSONCache(w, http.StatusOK, v, publicCache)
}

const publicCache = "public, max-age=300"
