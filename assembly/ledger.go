package assembly

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/rigout/rigout/audit/postgres"
	"github.com/rigout/rigout/audit/sqlite"
	"github.com/rigout/rigout/config"
	"github.com/rigout/rigout/internal/runstate"
)

// OpenLedger opens the audit ledger cfg's file names, as the binary does:
// PostgreSQL when audit.postgres is set (with its chain key from
// audit.key_env, its password from audit.password_env), else SQLite at
// cfg.AuditDB or <cfg.StateDir>/audit.db. It uses cfg.File, StateDir,
// AuditDB, Getenv and Logger. The ledger keeps each command and path as
// it ran, redacted, and with audit.store_args every argument.
//
// On SQLite, intent rows name this process, and calls an earlier gateway
// left unfinished (killed mid-call) are recorded as interrupted, and the
// processes they left running on this boot ended, before OpenLedger
// returns. Without /proc (an empty chroot) the process cannot be named:
// calls are then left open.
func OpenLedger(ctx context.Context, cfg Config) (Ledger, error) {
	c := cfg
	c.setDefaults()
	if c.File == nil {
		return nil, errors.New("assembly: Config.File is nil: give &config.File{} for the defaults")
	}
	if c.File.Audit.Postgres != "" {
		pc, err := PostgresConfig(c.File.Audit, c.Getenv, false, c.Logger)
		if err != nil {
			return nil, err
		}
		l, err := postgres.Open(ctx, pc)
		if err != nil {
			return nil, fmt.Errorf("audit ledger: %w", err)
		}
		c.Logger.Info("audit ledger on PostgreSQL", "db", l.Label(), "gateway", l.Gateway())
		return l, nil
	}
	path := c.AuditDB
	if path == "" {
		if c.StateDir == "" {
			return nil, errors.New("assembly: OpenLedger: neither Config.AuditDB nor Config.StateDir is set")
		}
		path = filepath.Join(c.StateDir, "audit.db")
	}
	key, err := c.File.Audit.ChainKey(c.Getenv)
	if err != nil {
		return nil, err
	}
	l, err := sqlite.Open(ctx, sqlite.Config{Path: path, Logger: c.Logger, StoreArgs: true,
		UnsafeSyncNormal: c.File.Audit.UnsafeSyncNormal, ChainKey: key, AnchorPath: c.File.Audit.AnchorFile})
	if err != nil {
		return nil, fmt.Errorf("audit ledger %s: %w", path, err)
	}
	self, err := runstate.Self()
	if err != nil {
		c.Logger.Warn("audit ledger: cannot name this process in intent rows; interrupted calls will not be reconciled", "err", err)
		return l, nil
	}
	if _, _, err := reconcileInterrupted(ctx, l, self, time.Now(), c.Logger); err != nil {
		l.Close()
		return nil, fmt.Errorf("audit ledger %s: %w", path, err)
	}
	return stampLedger(l, self), nil
}

// PostgresConfig reads the PostgreSQL ledger settings of the file's audit
// section: "postgres" (the DSN), "password_env", "key_env", "gateway",
// reading the variables through getenv. A DSN that carries a password is
// refused: the password belongs in the environment, never in the file.
// Without a chain key (and without "unsafe_chain_key_in_database") a
// ledger opened to write is refused; readOnly (for reading and checking
// the ledger) needs none.
func PostgresConfig(a config.Audit, getenv func(string) string, readOnly bool, logger *slog.Logger) (postgres.Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	cfg := postgres.Config{DSN: a.Postgres, Gateway: a.Gateway, ReadOnly: readOnly, StoreArgs: true, Logger: logger,
		UnsafeAmbientCredentials: a.UnsafeAmbientCredentials}
	if err := dsnHasNoPassword(a.Postgres); err != nil {
		return cfg, err
	}
	key, err := a.ChainKey(getenv)
	if err != nil {
		return cfg, err
	}
	cfg.ChainKey, cfg.UnsafeChainKeyInDatabase = key, a.UnsafeChainKeyInDatabase
	if key == nil && !a.UnsafeChainKeyInDatabase && !readOnly {
		return cfg, errors.New(`audit.postgres needs the ledger's chain key: name the variable holding it (64 hex digits, the same on every gateway) in "key_env", or set "unsafe_chain_key_in_database"`)
	}
	if a.PasswordEnv != "" {
		if pw := getenv(a.PasswordEnv); pw == "" {
			return cfg, fmt.Errorf("audit.password_env names %s, which is not set", a.PasswordEnv)
		} else {
			cfg.Password = pw
		}
	}
	return cfg, nil
}

// dsnPassword finds a password in a key=value connection string.
var dsnPassword = regexp.MustCompile(`(^|\s)password\s*=`)

// dsnHasNoPassword refuses a connection string with a password in it.
func dsnHasNoPassword(dsn string) error {
	if _, err := postgres.ParseDSN(dsn); err != nil {
		return fmt.Errorf("audit.postgres: %w", err)
	}
	has := dsnPassword.MatchString(dsn)
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return fmt.Errorf("audit.postgres: %w", err)
		}
		_, set := u.User.Password()
		has = set || u.Query().Has("password")
	}
	if has {
		return errors.New(`audit.postgres: the connection string holds a password; remove it and name an environment variable in "password_env" instead`)
	}
	return nil
}
