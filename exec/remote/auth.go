package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

// Sentinels for authentication failures; an *AuthError unwraps to one.
var (
	// ErrPasswordRequired means the host wants a password or a
	// keyboard-interactive login. Rigout never prompts and never sends
	// passwords.
	ErrPasswordRequired = errors.New("exec: host asks for a password or keyboard-interactive login; rigout only logs in with keys and never prompts")
	// ErrNoKeys means there was no key to offer: no identity file could be
	// read and the agent (if any) holds none.
	ErrNoKeys = errors.New("exec: no usable SSH key")
	// ErrKeysRejected means the host refused every key offered.
	ErrKeysRejected = errors.New("exec: host refused every key offered")
)

// AuthError reports a login that failed. The host key had been verified;
// no password was sent.
type AuthError struct {
	// Host is the name asked for; User the remote login.
	Host string
	User string
	// Offered lists the keys offered ("ssh-ed25519 SHA256:… (file)").
	Offered []string
	// Skipped lists keys that could not be used, and why.
	Skipped []string
	// Methods are the authentication methods the host allows.
	Methods []string
	// Err is ErrPasswordRequired, ErrNoKeys or ErrKeysRejected.
	Err error
}

func (e *AuthError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "exec: cannot log in to %s as %s: %v", e.Host, e.User, strings.TrimPrefix(e.Err.Error(), "exec: "))
	if len(e.Offered) > 0 {
		fmt.Fprintf(&b, "; offered %s", strings.Join(e.Offered, ", "))
	}
	if len(e.Skipped) > 0 {
		fmt.Fprintf(&b, "; skipped %s", strings.Join(e.Skipped, "; "))
	}
	if len(e.Methods) > 0 {
		fmt.Fprintf(&b, "; the host allows %s", strings.Join(e.Methods, ", "))
	} else {
		b.WriteString("; the host allows no further authentication method")
	}
	return b.String()
}

// Unwrap returns Err.
func (e *AuthError) Unwrap() error { return e.Err }

// authenticator finds the keys to offer for an endpoint.
type authenticator struct {
	home          string
	agentSocket   string
	passphraseEnv string
	getenv        func(string) string
	logger        *slog.Logger

	// mu protects the following: keys decrypted with the passphrase,
	// by file, so that each connection does not run bcrypt_pbkdf again
	// (ssh-agent keeps them in memory the same way).
	mu        sync.Mutex
	decrypted map[string]decryptedKey
}

type decryptedKey struct {
	data   string // the file's contents when it was decrypted
	signer ssh.Signer
}

// credentials are the keys for one login, and the agent connection their
// agent signers use until the handshake ends.
type credentials struct {
	signers []ssh.Signer
	offered []string
	skipped []string
	agent   net.Conn
}

func (c *credentials) close() {
	if c.agent != nil {
		c.agent.Close()
	}
}

// load reads the endpoint's identity files (or OpenSSH's defaults when it
// names none) and the agent's keys.
func (a *authenticator) load(ctx context.Context, ep *Endpoint) *credentials {
	creds := &credentials{}
	files := ep.IdentityFiles
	explicit := len(files) > 0
	if !explicit {
		files = defaultIdentityFiles(a.home)
	}
	// Public halves of the identity files, for IdentitiesOnly and for
	// matching encrypted files to agent keys.
	var idPubs [][]byte
	var fileSigners []ssh.Signer
	var fileNames []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			if explicit || !errors.Is(err, fs.ErrNotExist) {
				creds.skipped = append(creds.skipped, fmt.Sprintf("%s (%v)", f, unwrapPathError(err)))
			}
			continue
		}
		signer, err := ssh.ParsePrivateKey(data)
		var missing *ssh.PassphraseMissingError
		switch {
		case err == nil:
		case errors.As(err, &missing):
			pub := missing.PublicKey
			if pub == nil {
				pub = readPublicKey(f + ".pub")
			}
			if pub != nil {
				idPubs = append(idPubs, pub.Marshal())
			}
			pass := ""
			if a.passphraseEnv != "" {
				pass = a.getenv(a.passphraseEnv)
			}
			if pass == "" {
				creds.skipped = append(creds.skipped, fmt.Sprintf("%s (encrypted: add it to the agent%s)", f, a.passphraseHint()))
				continue
			}
			signer, err = a.decrypt(f, data, pass)
			if err != nil {
				creds.skipped = append(creds.skipped, fmt.Sprintf("%s (the passphrase in $%s does not open it)", f, a.passphraseEnv))
				continue
			}
		default:
			creds.skipped = append(creds.skipped, fmt.Sprintf("%s (not a private key: %v)", f, err))
			continue
		}
		idPubs = append(idPubs, signer.PublicKey().Marshal())
		fileSigners = append(fileSigners, signer)
		fileNames = append(fileNames, f)
	}

	var agentSigners []ssh.Signer
	if a.agentSocket != "" {
		d := net.Dialer{Timeout: 2 * time.Second}
		conn, err := d.DialContext(ctx, "unix", a.agentSocket)
		if err != nil {
			a.logger.LogAttrs(ctx, slog.LevelDebug, "ssh agent unreachable", slog.String("socket", a.agentSocket), slog.Any("err", err))
			creds.skipped = append(creds.skipped, fmt.Sprintf("agent %s (%v)", a.agentSocket, unwrapPathError(err)))
		} else {
			creds.agent = conn
			_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
			signers, err := agent.NewClient(conn).Signers()
			if err != nil {
				creds.skipped = append(creds.skipped, fmt.Sprintf("agent %s (%v)", a.agentSocket, err))
			}
			_ = conn.SetDeadline(time.Time{})
			agentSigners = signers
		}
	}

	seen := map[string]bool{}
	add := func(s ssh.Signer, from string) {
		k := string(s.PublicKey().Marshal())
		if seen[k] {
			return
		}
		seen[k] = true
		creds.signers = append(creds.signers, s)
		creds.offered = append(creds.offered, fmt.Sprintf("%s %s (%s)", s.PublicKey().Type(), ssh.FingerprintSHA256(s.PublicKey()), from))
	}
	for i, s := range fileSigners {
		add(s, fileNames[i])
	}
	for _, s := range agentSigners {
		if ep.IdentitiesOnly && !slices.ContainsFunc(idPubs, func(p []byte) bool { return bytes.Equal(p, s.PublicKey().Marshal()) }) {
			continue
		}
		add(s, "agent")
	}
	return creds
}

func (a *authenticator) decrypt(path string, data []byte, pass string) (ssh.Signer, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if k, ok := a.decrypted[path]; ok && k.data == string(data) {
		return k.signer, nil
	}
	signer, err := ssh.ParsePrivateKeyWithPassphrase(data, []byte(pass))
	if err != nil {
		return nil, err
	}
	if a.decrypted == nil {
		a.decrypted = map[string]decryptedKey{}
	}
	a.decrypted[path] = decryptedKey{data: string(data), signer: signer}
	return signer, nil
}

func (a *authenticator) passphraseHint() string {
	if a.passphraseEnv == "" {
		return ""
	}
	return " or set $" + a.passphraseEnv
}

func readPublicKey(path string) ssh.PublicKey {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	pub, _, _, _, err := ssh.ParseAuthorizedKey(data)
	if err != nil {
		return nil
	}
	return pub
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// methods returns the auth configuration for a ClientConfig: public keys
// only, and a callback that ends the login with a clear *AuthError as
// soon as no key is left to try. It never offers a password.
func (c *credentials) methods(host, user string, failed **AuthError) ([]ssh.AuthMethod, ssh.ClientAuthCallback) {
	auth := []ssh.AuthMethod{ssh.PublicKeys(c.signers...)}
	cb := func(ctx *ssh.ClientAuthContext) (ssh.AuthMethod, error) {
		allowed := ctx.AllowedMethods
		if len(c.signers) > 0 && slices.Contains(allowed, "publickey") && !slices.Contains(ctx.TriedMethods, "publickey") {
			return nil, nil // the public keys from auth
		}
		e := &AuthError{Host: host, User: user, Offered: c.offered, Skipped: c.skipped, Methods: slices.Clone(allowed)}
		switch {
		case slices.Contains(allowed, "password") || slices.Contains(allowed, "keyboard-interactive"):
			e.Err = ErrPasswordRequired
		case len(c.signers) == 0:
			e.Err = ErrNoKeys
		default:
			e.Err = ErrKeysRejected
		}
		*failed = e
		return nil, e
	}
	return auth, cb
}
